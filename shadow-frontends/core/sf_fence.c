/* sf_fence.c - the unfenced set (see sf_fence.h). */
#define _GNU_SOURCE
#include "sf_fence.h"

#include <string.h>

void sff_init(struct sf_fence *f)
{
    memset(f, 0, sizeof(*f));
    for (unsigned i = 0; i < SFF_DOMS; i++)
        sf_ranges_init(&f->s[i].r);
}

void sff_fini(struct sf_fence *f)
{
    if (!f)
        return;
    for (unsigned i = 0; i < SFF_DOMS; i++)
        sf_ranges_fini(&f->s[i].r);
    f->n = 0;
}

bool sff_empty(const struct sf_fence *f)
{
    return f->n == 0;
}

static struct sff_set *set_for(struct sf_fence *f, unsigned domid, uint64_t gen)
{
    for (unsigned i = 0; i < f->n; i++)
        if (!f->s[i].several && f->s[i].domid == domid)
            return &f->s[i];
    if (f->n < SFF_DOMS) {
        struct sff_set *s = &f->s[f->n++];
        s->domid = domid;
        s->several = false;
        s->gen = gen;
        return s;
    }
    /* No room for another domain: the last set stands for several, and
     * only a generation past all of them releases it. */
    struct sff_set *s = &f->s[SFF_DOMS - 1];
    s->several = true;
    return s;
}

void sff_add(struct sf_fence *f, unsigned domid, uint64_t gen, uint64_t start, uint64_t len)
{
    if (!len)
        return;
    struct sff_set *s = set_for(f, domid, gen);
    if (gen > s->gen)
        s->gen = gen;
    sf_ranges_add(&s->r, start, len);
}

bool sff_holds(const struct sf_fence *f, uint64_t start, uint64_t len)
{
    for (unsigned i = 0; i < f->n; i++)
        if (sf_ranges_overlap(&f->s[i].r, start, len))
            return true;
    return false;
}

/* Drop set i, keeping the others in order. */
static void drop(struct sf_fence *f, unsigned i)
{
    struct sf_ranges r = f->s[i].r;
    sf_ranges_fini(&r);
    memmove(&f->s[i], &f->s[i + 1], (f->n - i - 1) * sizeof(f->s[0]));
    f->n--;
    memset(&f->s[f->n], 0, sizeof(f->s[0]));
    sf_ranges_init(&f->s[f->n].r);
}

unsigned sff_release_fenced(struct sf_fence *f, uint64_t fenced)
{
    unsigned released = 0;
    for (unsigned i = 0; i < f->n;) {
        if (f->s[i].gen < fenced) {
            drop(f, i);
            released++;
        } else {
            i++;
        }
    }
    return released;
}

unsigned sff_release_domain(struct sf_fence *f, unsigned domid)
{
    for (unsigned i = 0; i < f->n; i++)
        if (!f->s[i].several && f->s[i].domid == domid) {
            drop(f, i);
            return 1;
        }
    return 0;
}

uint64_t sff_bytes(const struct sf_fence *f)
{
    uint64_t b = 0;
    for (unsigned i = 0; i < f->n; i++) {
        uint64_t x = sf_ranges_bytes(&f->s[i].r);
        b = x > UINT64_MAX - b ? UINT64_MAX : b + x;
    }
    return b;
}
