/* history.h - finished recoveries, for `shadowctl history` and metrics:
 * the last SD_HISTORY in memory (a ring, history.c), all of them in the
 * state dir (persist.c). */
#ifndef SD_HISTORY_H
#define SD_HISTORY_H

#include "recovery.h"

#include <stdbool.h>
#include <stdint.h>

#define SD_HISTORY 64 /* recoveries kept for `shadowctl history` */

struct sd_hist {
    char domain[64];
    unsigned id;
    enum sd_rkind kind;
    bool ok;
    char reason[200];
    char outcome[160];
    unsigned old_domid, new_domid, attempts, devices, reconnected;
    uint64_t detect_ms, restart_ms, rewire_ms, reconnect_ms, total_ms;
    uint64_t wall; /* CLOCK_REALTIME seconds at the end */
    bool warm;     /* a standby was promoted */
    unsigned hot;  /* devices switched to their standby connection without a handshake */
};

/* The last SD_HISTORY of them, oldest overwritten first. */
struct sd_histring {
    struct sd_hist h[SD_HISTORY];
    unsigned n, next; /* how many are kept; where the next goes */
};

void sd_hist_add(struct sd_histring *r, const struct sd_hist *h);
/* The i-th oldest kept, i < r->n. */
const struct sd_hist *sd_hist_at(const struct sd_histring *r, unsigned i);
/* The newest of domain name, or NULL. */
const struct sd_hist *sd_hist_last(const struct sd_histring *r, const char *name);

#endif
