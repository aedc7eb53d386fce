/* detect.h - deciding that a serving driver domain has failed (detect.c). */
#ifndef SD_DETECT_H
#define SD_DETECT_H

#include <stdint.h>

struct sd;
struct sd_dom;
struct sd_dev;

void sd_detect_release(struct sd *sd);                 /* @releaseDomain fired */
void sd_detect_changed(struct sd *sd, unsigned domid); /* a driver says domid changed */
/* After either: one look at every domain, once per loop turn (before the
 * domains' ticks, so that a recovery it starts promotes in the same turn). */
void sd_detect_look(struct sd *sd);
void sd_detect_heartbeat(struct sd_dom *d); /* the heartbeat key changed */
void sd_detect_console(struct sd_dom *d);   /* something in its console dir changed */
/* A domain created at boot-weight serves: its config's weight again. */
void sd_detect_settle(struct sd_dom *d);
void sd_detect_report(struct sd_dom *d, struct sd_dev *v);
void sd_detect_tick(struct sd_dom *d, uint64_t now);
/* When a lone report waiting for corroboration is next looked at (the
 * domain's heartbeat still long enough to corroborate it); UINT64_MAX if none. */
uint64_t sd_detect_lone_wake(const struct sd_dom *d);
/* When the serving domain is next asked whether it is paused (its heartbeat
 * still for pause-timeout); UINT64_MAX if not due. */
uint64_t sd_detect_pause_wake(const struct sd_dom *d);

#endif
