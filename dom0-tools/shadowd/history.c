/* history.c - the ring of the last SD_HISTORY finished recoveries. */
#include "history.h"

#include <string.h>

void sd_hist_add(struct sd_histring *r, const struct sd_hist *h)
{
    r->h[r->next] = *h;
    r->next = (r->next + 1) % SD_HISTORY;
    if (r->n < SD_HISTORY)
        r->n++;
}

const struct sd_hist *sd_hist_at(const struct sd_histring *r, unsigned i)
{
    return &r->h[(r->next + SD_HISTORY - r->n + i) % SD_HISTORY];
}

const struct sd_hist *sd_hist_last(const struct sd_histring *r, const char *name)
{
    for (unsigned i = r->n; i-- > 0;)
        if (!strcmp(sd_hist_at(r, i)->domain, name))
            return sd_hist_at(r, i);
    return NULL;
}
