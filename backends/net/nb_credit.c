/* nb_credit.c - credit-based rate limiting (see nb_credit.h). */
#define _GNU_SOURCE
#include "nb_credit.h"

#include <errno.h>
#include <stdlib.h>

/* The largest packet a guest can send (64 KiB), so every packet fits the cap. */
#define NB_CREDIT_MIN_CAP 65536u
/* Bounds that keep the arithmetic below far from overflow. */
#define NB_CREDIT_MAX_BYTES (1ull << 40)
#define NB_CREDIT_MAX_USEC  (1ull << 32)

static int parse_u64(const char *s, const char **end, uint64_t max, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || v == 0 || v > max)
        return -1;
    *end = e;
    *out = v;
    return 0;
}

int nb_credit_parse(const char *s, uint64_t *bytes, uint64_t *usec)
{
    const char *e;
    if (parse_u64(s, &e, NB_CREDIT_MAX_BYTES, bytes) < 0 || *e != ',' ||
        parse_u64(e + 1, &e, NB_CREDIT_MAX_USEC, usec) < 0 || *e) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

void nb_credit_init(struct nb_credit *c, uint64_t bytes, uint64_t usec, uint64_t now_us)
{
    c->bytes = usec ? bytes : 0;
    c->usec = bytes ? usec : 0;
    c->remaining = c->bytes;
    c->cap = c->bytes > NB_CREDIT_MIN_CAP ? c->bytes : NB_CREDIT_MIN_CAP;
    c->last_us = now_us;
}

bool nb_credit_limited(const struct nb_credit *c)
{
    return c->bytes != 0;
}

static void refill(struct nb_credit *c, uint64_t now_us)
{
    if (now_us < c->last_us + c->usec)
        return;
    uint64_t periods = (now_us - c->last_us) / c->usec;
    c->last_us += periods * c->usec;
    /* periods * bytes may overflow only far beyond the cap. */
    if (periods > c->cap / c->bytes + 1)
        c->remaining = c->cap;
    else
        c->remaining += periods * c->bytes;
    if (c->remaining > c->cap)
        c->remaining = c->cap;
}

uint64_t nb_credit_take(struct nb_credit *c, unsigned size, uint64_t now_us)
{
    if (!nb_credit_limited(c))
        return 0;
    refill(c, now_us);
    if (c->remaining >= size) {
        c->remaining -= size;
        return 0;
    }
    uint64_t need = size - c->remaining;
    uint64_t periods = (need + c->bytes - 1) / c->bytes;
    uint64_t due = c->last_us + periods * c->usec;
    return due > now_us ? due - now_us : 1;
}
