/* nb_credit.h - the toolstack's rate limit ("rate" = "<bytes>,<usec>", as
 * libxl writes it): a credit of <bytes> every <usec>, spent by the guest's
 * transmitted packets. Unused credit accumulates up to one period's worth,
 * or up to the largest packet, so that any packet can go eventually. Pure:
 * the caller passes monotonic microseconds.
 */
#ifndef NB_CREDIT_H
#define NB_CREDIT_H

#include <stdbool.h>
#include <stdint.h>

struct nb_credit {
    uint64_t bytes, usec; /* 0, 0: unlimited */
    uint64_t remaining;
    uint64_t cap;
    uint64_t last_us; /* start of the current period */
};

/* Parse "<bytes>,<usec>" (both decimal, > 0). 0, or -1 with errno EINVAL. */
int nb_credit_parse(const char *s, uint64_t *bytes, uint64_t *usec);
/* Start with a full period's credit; bytes == 0 means unlimited. */
void nb_credit_init(struct nb_credit *c, uint64_t bytes, uint64_t usec, uint64_t now_us);
bool nb_credit_limited(const struct nb_credit *c);
/* Spend size bytes if the credit allows: returns 0. Otherwise returns the
 * microseconds until it will (nothing spent). */
uint64_t nb_credit_take(struct nb_credit *c, unsigned size, uint64_t now_us);

#endif
