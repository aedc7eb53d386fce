/* tb_hostile.c - what testback does wrong, and when. Every act is a
 * protocol violation a frontend can detect (a dropped response is detected
 * by its deadline); none corrupts data with a valid-looking response, so a
 * test can still check every byte. Seeded xorshift64*: a printed seed
 * reproduces a run. */
#define _GNU_SOURCE
#include "tb.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

void tb_srand(uint64_t seed)
{
    rng = seed ? seed : 0x9E3779B97F4A7C15ull;
}

uint64_t tb_rand(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

const char *tb_act_name(enum tb_act a)
{
    static const char *const names[] = {
        "none",       "random-id", "duplicate", "wrong-op", "bad-status",  "garbage-prod",
        "extra-resp", "drop",      "scribble",  "state",    "event-storm",
    };
    return a < TB_ACT_COUNT ? names[a] : "?";
}

/* The acts an injected "corrupt" fault cycles through. */
static const enum tb_act corrupt_acts[] = {TB_ACT_RANDOM_ID, TB_ACT_DUPLICATE, TB_ACT_WRONG_OP,
                                           TB_ACT_BAD_STATUS, TB_ACT_GARBAGE_PROD};

enum tb_act tb_hostile_next(struct tb_backend *b)
{
    if (b->corrupt_left) {
        b->corrupt_left--;
        return corrupt_acts[b->corrupt_kind++ % (sizeof(corrupt_acts) / sizeof(corrupt_acts[0]))];
    }
    if (!b->o.hostile || b->served <= b->o.hostile_after)
        return TB_ACT_NONE;
    uint64_t now = tb_now_ms();
    if (!b->hostile_until_ms) {
        b->hostile_until_ms = b->o.hostile_for_ms ? now + b->o.hostile_for_ms : UINT64_MAX;
        tb_log("TESTBACK-HOSTILE seed=%llu pct=%u for %u ms", (unsigned long long)b->o.seed,
               b->o.hostile_pct, b->o.hostile_for_ms);
    }
    if (now >= b->hostile_until_ms) {
        if (b->o.hostile) {
            b->o.hostile = false;
            tb_log("TESTBACK-HOSTILE-OVER behaving from now on");
        }
        return TB_ACT_NONE;
    }
    if (tb_rand() % 100 >= b->o.hostile_pct)
        return TB_ACT_NONE;
    return (enum tb_act)(1 + tb_rand() % (TB_ACT_COUNT - 1));
}
