/* recover.h - the recovery of one driver domain, and its startup (recover.c). */
#ifndef SD_RECOVER_H
#define SD_RECOVER_H

#include "drv.h"
#include "recovery.h"

#include <stdint.h>

struct sd_dom;
struct sd_dev;

void sd_recover_start(struct sd_dom *d, enum sd_rkind kind, enum sd_source src,
                      uint64_t evidence_ms, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void sd_recover_tick(struct sd_dom *d, uint64_t now);
void sd_recover_done_op(struct sd_dom *d, enum sd_drv_op op, int rc, unsigned domid,
                        const char *err);
void sd_recover_fe_event(struct sd_dom *d, struct sd_dev *v);
/* Resume a persisted recovery, or adopt/start the domain (startup). */
void sd_recover_startup(struct sd_dom *d);
/* The wait before the serving domain's next restart (budget.h). */
uint64_t sd_backoff_ms(const struct sd_dom *d);
/* The earliest time d wants attention, or UINT64_MAX. */
uint64_t sd_dom_wake(const struct sd_dom *d);

#endif
