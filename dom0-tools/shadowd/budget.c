/* budget.c - the restart budget and backoff (budget.h). */
#include "budget.h"

#include <string.h>

unsigned sd_budget_used(struct sd_budget *b, const struct sd_domconf *c, uint64_t now)
{
    unsigned k = 0;
    for (unsigned i = 0; i < b->nrestarts; i++) /* keep those inside the window */
        if (b->restarts[i] + c->restart_window_ms > now)
            b->restarts[k++] = b->restarts[i];
    b->nrestarts = k;
    return k;
}

unsigned sd_budget_count(const struct sd_budget *b, const struct sd_domconf *c, uint64_t now)
{
    unsigned n = 0;
    for (unsigned i = 0; i < b->nrestarts; i++)
        n += b->restarts[i] + c->restart_window_ms > now;
    return n;
}

bool sd_budget_ok(struct sd_budget *b, const struct sd_domconf *c, uint64_t now)
{
    return sd_budget_used(b, c, now) < c->restart_budget;
}

void sd_budget_spend(struct sd_budget *b, const struct sd_domconf *c, uint64_t now)
{
    sd_budget_used(b, c, now);
    if (b->nrestarts == SD_MAX_RESTARTS) {
        memmove(b->restarts, b->restarts + 1, (SD_MAX_RESTARTS - 1) * sizeof(b->restarts[0]));
        b->nrestarts--;
    }
    b->restarts[b->nrestarts++] = now;
}

uint64_t sd_budget_backoff(const struct sd_budget *b, const struct sd_domconf *c, uint64_t first)
{
    if (b->streak == 0)
        return first;
    uint64_t w = c->backoff_initial_ms;
    for (unsigned i = 1; i < b->streak && w < c->backoff_max_ms; i++)
        w *= 2;
    return w < c->backoff_max_ms ? w : c->backoff_max_ms;
}

void sd_budget_reset(struct sd_budget *b)
{
    b->nrestarts = 0;
    b->streak = 0;
}
