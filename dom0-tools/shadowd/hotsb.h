/* hotsb.h - the hot standby's connections (hotsb.c): each shadow-aware
 * frontend's second, idle connection to the standby domain, in a slot of
 * its device dir (schema.md, "The hot standby's connection"). */
#ifndef SD_HOTSB_H
#define SD_HOTSB_H

#include <stdint.h>

struct sd_dom;
struct sd_dev;

/* While the domain is up: attach, watch over and detach the connections. */
void sd_hot_tick(struct sd_dom *d, uint64_t now);
uint64_t sd_hot_wake(const struct sd_dom *d);
/* Something changed below v's frontend dir (rel: the path below it). */
void sd_hot_fe_event(struct sd_dom *d, struct sd_dev *v, const char *rel);
/* What shadowd believed of the connections may be stale (a recovery ended,
 * shadowd started): look at the store again. */
void sd_hot_reset(struct sd_dom *d);
/* Devices with a connection to standby domain sb, and how many of those
 * are Connected (for the promotion's log line and status). */
unsigned sd_hot_count(const struct sd_dom *d, unsigned sb, unsigned *connected);

#endif
