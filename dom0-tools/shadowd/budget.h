/* budget.h - the restart budget and backoff of one driver-domain instance
 * (the serving domain's restarts, the standby's replacements): at most
 * restart-budget restarts per restart-window, and a streak of restarts
 * waiting backoff-initial, doubling up to backoff-max, between them. A
 * streak ends when the instance has been up for stable-time (the caller
 * decides when, and sets streak to 0). */
#ifndef SD_BUDGET_H
#define SD_BUDGET_H

#include "conf.h"

#include <stdbool.h>
#include <stdint.h>

#define SD_MAX_RESTARTS 64 /* restart times remembered for the budget */

struct sd_budget {
    uint64_t restarts[SD_MAX_RESTARTS]; /* CLOCK_MONOTONIC ms, oldest first */
    unsigned nrestarts;
    unsigned streak; /* restarts since the instance was last stable */
};

/* Restarts within the window ending at now (older ones are forgotten). */
unsigned sd_budget_used(struct sd_budget *b, const struct sd_domconf *c, uint64_t now);
/* The same count, forgetting nothing (for status). */
unsigned sd_budget_count(const struct sd_budget *b, const struct sd_domconf *c, uint64_t now);
/* May the instance restart now? */
bool sd_budget_ok(struct sd_budget *b, const struct sd_domconf *c, uint64_t now);
/* Count one restart at now against the budget (the streak is the caller's). */
void sd_budget_spend(struct sd_budget *b, const struct sd_domconf *c, uint64_t now);
/* The wait before the next restart: first while no streak is running, then
 * backoff-initial doubling up to backoff-max. */
uint64_t sd_budget_backoff(const struct sd_budget *b, const struct sd_domconf *c, uint64_t first);
/* The operator took the budget into their hands (shadowctl restart). */
void sd_budget_reset(struct sd_budget *b);

#endif
