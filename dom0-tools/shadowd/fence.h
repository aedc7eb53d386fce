/* fence.h - the failed domain at a promotion (fence.c): fenced before the
 * standby takes over, destroyed in the background after the switch. */
#ifndef SD_FENCE_H
#define SD_FENCE_H

#include "drv.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sd_dom;

/* Fence domid (the fencing rule is in fence.c), whose state the caller
 * has just read (st): 0 with how it is fenced in how ("paused", "already
 * paused", "shut down (crash)", "gone"), or -1 with err (it may still run:
 * the caller destroys it and waits). */
int sd_fence(struct sd_dom *d, unsigned domid, const struct sd_domstat *st, char *how, size_t hlen,
             char *err, size_t elen);
/* domid, fenced, was promoted over: destroy it once the frontends are
 * switched (sd_reap_tick), without holding the recovery for it. */
void sd_reap_arm(struct sd_dom *d, unsigned domid);
void sd_reap_tick(struct sd_dom *d, uint64_t now);
void sd_reap_done_op(struct sd_dom *d, enum sd_drv_op op, int rc, const char *err);
uint64_t sd_reap_wake(const struct sd_dom *d);
/* Every domain that served d's devices before is fenced for good: none
 * waits for its destroy, and a recovery in progress destroyed its failed
 * domain before rewiring. Then a rewire writes FE/shadow/fenced with its
 * generation (schema.md), and a background destroy's end writes it for
 * every device. */
bool sd_fenced_all(const struct sd_dom *d);

#endif
