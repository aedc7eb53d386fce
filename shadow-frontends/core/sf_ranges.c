/* sf_ranges.c - a set of byte ranges (see sf_ranges.h). */
#define _GNU_SOURCE
#include "sf_ranges.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_CAP 16u

void sf_ranges_init(struct sf_ranges *s)
{
    memset(s, 0, sizeof(*s));
}

void sf_ranges_fini(struct sf_ranges *s)
{
    if (!s)
        return;
    free(s->v);
    sf_ranges_init(s);
}

bool sf_ranges_empty(const struct sf_ranges *s)
{
    return !s->all && s->n == 0;
}

static uint64_t end_of(uint64_t start, uint64_t len)
{
    return len > UINT64_MAX - start ? UINT64_MAX : start + len;
}

/* The first range whose end is at or past at (n if none): binary search. */
static unsigned first_ending_from(const struct sf_ranges *s, uint64_t at)
{
    unsigned lo = 0, hi = s->n;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (s->v[mid].end < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool grow(struct sf_ranges *s)
{
    if (s->cap >= SF_RANGES_MAX)
        return false;
    unsigned cap = s->cap ? s->cap * 2u : FIRST_CAP;
    if (cap > SF_RANGES_MAX)
        cap = SF_RANGES_MAX;
    struct sf_range *v = realloc(s->v, cap * sizeof(*v));
    if (!v)
        return false;
    s->v = v;
    s->cap = cap;
    return true;
}

/* One slot freed by merging the two neighbours closest together (and the
 * gap between them): coarser, never smaller. With fewer than two ranges
 * there is nothing to merge: then the set covers everything. */
static void coarsen(struct sf_ranges *s)
{
    if (s->n < 2) {
        s->all = true;
        return;
    }
    unsigned best = 0;
    for (unsigned k = 1; k + 1 < s->n; k++)
        if (s->v[k + 1].start - s->v[k].end < s->v[best + 1].start - s->v[best].end)
            best = k;
    s->v[best].end = s->v[best + 1].end;
    memmove(&s->v[best + 1], &s->v[best + 2], (s->n - best - 2) * sizeof(s->v[0]));
    s->n--;
}

void sf_ranges_add(struct sf_ranges *s, uint64_t start, uint64_t len)
{
    if (!len || s->all)
        return;
    uint64_t end = end_of(start, len);
    if (s->n == s->cap && !grow(s)) {
        coarsen(s);
        if (s->all)
            return;
    }
    /* Ranges from i on end at or past start; those from i to j start at or
     * before end: they overlap or touch the new one and merge with it. */
    unsigned i = first_ending_from(s, start), j = i;
    while (j < s->n && s->v[j].start <= end) {
        if (s->v[j].start < start)
            start = s->v[j].start;
        if (s->v[j].end > end)
            end = s->v[j].end;
        j++;
    }
    if (j == i) {
        memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(s->v[0]));
        s->n++;
    } else {
        memmove(&s->v[i + 1], &s->v[j], (s->n - j) * sizeof(s->v[0]));
        s->n -= j - i - 1;
    }
    s->v[i] = (struct sf_range){.start = start, .end = end};
}

void sf_ranges_merge(struct sf_ranges *dst, const struct sf_ranges *src)
{
    if (src->all) {
        dst->all = true;
        return;
    }
    for (unsigned k = 0; k < src->n; k++)
        sf_ranges_add(dst, src->v[k].start, src->v[k].end - src->v[k].start);
}

bool sf_ranges_overlap(const struct sf_ranges *s, uint64_t start, uint64_t len)
{
    if (!len)
        return false;
    if (s->all)
        return true;
    /* The first range ending past start is the only candidate. */
    unsigned i = first_ending_from(s, start);
    if (i < s->n && s->v[i].end == start)
        i++;
    return i < s->n && s->v[i].start < end_of(start, len);
}

uint64_t sf_ranges_bytes(const struct sf_ranges *s)
{
    if (s->all)
        return UINT64_MAX;
    uint64_t b = 0;
    for (unsigned k = 0; k < s->n; k++)
        b += s->v[k].end - s->v[k].start;
    return b;
}
