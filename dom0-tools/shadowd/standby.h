/* standby.h - the warm standby of a driver domain (standby.c). */
#ifndef SD_STANDBY_H
#define SD_STANDBY_H

#include "drv.h"

#include <stdbool.h>
#include <stdint.h>

struct sd_dom;

/* A standby is ready to be promoted, as far as shadowd knows (no look at
 * the domain: sd_standby_fit). */
bool sd_standby_ready(const struct sd_dom *d);
void sd_standby_startup(struct sd_dom *d); /* adopt a running standby, or plan one */
void sd_standby_tick(struct sd_dom *d, uint64_t now);
void sd_standby_check(struct sd_dom *d); /* death events: look at the standby */
/* A standby to look at (booting or ready), and what a look at every domain
 * (look_id) saw of it. */
bool sd_standby_lookable(const struct sd_dom *d);
void sd_standby_seen(struct sd_dom *d, const struct sd_domstat *st, unsigned look_id);
void sd_standby_heartbeat(struct sd_dom *d);
void sd_standby_done_op(struct sd_dom *d, enum sd_drv_op op, int rc, unsigned domid,
                        const char *err);
/* Would sd_standby_take promote one now (ready, running)? */
bool sd_standby_fit(struct sd_dom *d);
/* Promote: the domid of the ready standby sd_standby_fit found running a
 * moment ago, now the serving domain's (slot swapped, its heartbeat watch
 * dropped; the caller drops its domain watch), or 0 if there is none. */
unsigned sd_standby_take(struct sd_dom *d);
uint64_t sd_standby_wake(const struct sd_dom *d);

#endif
