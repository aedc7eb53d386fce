/* sf_recovery.c - recovery bookkeeping. */
#define _GNU_SOURCE
#include "sf_recovery.h"

#include "understudy-keys.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void sfr_init(struct sf_recovery *r)
{
    memset(r, 0, sizeof(*r));
    r->state = SF_CONNECTING;
}

const char *sf_kind_name(enum sf_kind k)
{
    switch (k) {
    case SF_TIMEOUT:
        return "timeout";
    case SF_BAD_RESPONSE:
        return "bad-response";
    case SF_BACKEND_CLOSED:
        return "backend-closed";
    case SF_BACKEND_VANISHED:
        return "backend-vanished";
    case SF_BACKEND_RESTARTED:
        return "backend-restarted";
    }
    return "invalid";
}

const char *sf_state_word(enum sf_state s)
{
    switch (s) {
    case SF_LIVE:
        return USK_STATE_LIVE;
    case SF_FAILED:
        return USK_STATE_FAILED;
    case SF_CONNECTING:
    case SF_RECOVERING:
        break;
    }
    return USK_STATE_RECOVERING;
}

bool sfr_detect(struct sf_recovery *r, enum sf_kind kind, const char *detail, uint64_t now,
                uint64_t evidence_ms)
{
    if (r->state == SF_CONNECTING || r->state == SF_FAILED)
        return false;
    if (r->state == SF_LIVE) {
        r->state = SF_RECOVERING;
        r->t_evidence = evidence_ms <= now ? evidence_ms : now;
        r->t_detect = now;
        r->faults = 0;
    }
    r->replaying = false;
    r->faults++;
    r->report_seq++;
    int n = snprintf(r->report, sizeof(r->report), "%" PRIu64 " %s ", r->report_seq,
                     sf_kind_name(kind));
    if (n < 0 || (size_t)n >= sizeof(r->report))
        return true;
    /* The detail is ours, but may quote peer data: keep it printable. */
    size_t i = (size_t)n;
    for (const char *p = detail ? detail : "-"; *p && i < SF_REPORT_MAX; p++)
        r->report[i++] = (*p >= 0x20 && *p < 0x7f) ? *p : '?';
    r->report[i] = '\0';
    return true;
}

void sfr_connected(struct sf_recovery *r, uint64_t now)
{
    if (r->state == SF_CONNECTING) {
        r->state = SF_LIVE;
        return;
    }
    if (r->state == SF_RECOVERING) {
        r->replaying = true;
        r->t_connected = now;
    }
}

void sfr_replayed(struct sf_recovery *r, uint64_t now)
{
    if (r->state != SF_RECOVERING || !r->replaying)
        return;
    r->t_replayed = now;
    uint64_t detect = r->t_detect - r->t_evidence;
    uint64_t reconnect = r->t_connected - r->t_detect;
    uint64_t replay = r->t_replayed - r->t_connected;
    snprintf(r->last, sizeof(r->last),
             "detect=%" PRIu64 " reconnect=%" PRIu64 " replay=%" PRIu64 " total=%" PRIu64, detect,
             reconnect, replay, detect + reconnect + replay);
    r->recoveries++;
    r->replaying = false;
    r->state = SF_LIVE;
}

void sfr_fail(struct sf_recovery *r)
{
    r->state = SF_FAILED;
    r->replaying = false;
}
