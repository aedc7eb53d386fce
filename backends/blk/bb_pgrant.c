/* bb_pgrant.c - the persistent grant cache: a hash by gref, an LRU list of
 * idle entries, a list of pending ones, and slabs (the pages of one map
 * call). Busy and pending entries are off the idle list, so its tail is
 * always evictable.
 */
#define _GNU_SOURCE
#include "bb_pgrant.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#define NBUCKETS 1024u
#define PAGE     4096u

/* The pages of one map call: unmapped together when the last of its entries
 * has left the cache. */
struct bb_pgslab {
    unsigned char *addr;
    unsigned npages;
    unsigned live;           /* entries still cached */
    struct bb_pgrant *ent[]; /* npages; NULL once that entry left */
};

struct plist {
    struct bb_pgrant *head, *tail;
};

struct bb_pgcache {
    unsigned max, count;
    uint64_t maps, calls;
    bb_pg_map_fn *map;
    bb_pg_unmap_fn *unmap;
    void *opaque;
    struct plist idle;    /* users 0, mapped; most recently used first */
    struct plist pending; /* taken, not mapped yet; in take order */
    struct bb_pgrant *buckets[NBUCKETS];
};

static unsigned bucket(uint32_t gref)
{
    return (gref * 2654435761u) >> 22; /* top 10 bits */
}

static void plist_unlink(struct plist *l, struct bb_pgrant *pg)
{
    if (pg->prev)
        pg->prev->next = pg->next;
    else
        l->head = pg->next;
    if (pg->next)
        pg->next->prev = pg->prev;
    else
        l->tail = pg->prev;
    pg->prev = pg->next = NULL;
}

static void plist_push_front(struct plist *l, struct bb_pgrant *pg)
{
    pg->prev = NULL;
    pg->next = l->head;
    if (l->head)
        l->head->prev = pg;
    else
        l->tail = pg;
    l->head = pg;
}

static void plist_push_back(struct plist *l, struct bb_pgrant *pg)
{
    pg->next = NULL;
    pg->prev = l->tail;
    if (l->tail)
        l->tail->next = pg;
    else
        l->head = pg;
    l->tail = pg;
}

static void hash_unlink(struct bb_pgcache *c, struct bb_pgrant *pg)
{
    for (struct bb_pgrant **p = &c->buckets[bucket(pg->gref)]; *p; p = &(*p)->hnext) {
        if (*p == pg) {
            *p = pg->hnext;
            break;
        }
    }
    pg->hnext = NULL;
}

struct bb_pgcache *bb_pgcache_new(unsigned max, bb_pg_map_fn *map, bb_pg_unmap_fn *unmap,
                                  void *opaque)
{
    struct bb_pgcache *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->max = max;
    c->map = map;
    c->unmap = unmap;
    c->opaque = opaque;
    return c;
}

/* A mapped entry leaves (it is already off the hash and the lists): its slab
 * is unmapped once no entry of it is left. */
static void release_mapped(struct bb_pgcache *c, struct bb_pgrant *pg)
{
    struct bb_pgslab *s = pg->slab;
    s->ent[((unsigned char *)pg->page - s->addr) / PAGE] = NULL;
    free(pg);
    if (--s->live)
        return;
    c->unmap(c->opaque, s->addr, s->npages);
    c->count -= s->npages;
    free(s);
}

void bb_pgcache_free(struct bb_pgcache *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < NBUCKETS; i++) {
        for (struct bb_pgrant *pg = c->buckets[i], *next; pg; pg = next) {
            next = pg->hnext;
            if (pg->slab)
                release_mapped(c, pg);
            else
                free(pg); /* pending: nobody filled it */
        }
    }
    free(c);
}

/* Drop the idle entry pg and every other idle entry of its slab, so that the
 * slab is unmapped unless one of them is busy. */
static void evict(struct bb_pgcache *c, struct bb_pgrant *pg)
{
    struct bb_pgslab *s = pg->slab;
    unsigned n = s->npages;
    for (unsigned i = 0; i < n; i++) {
        struct bb_pgrant *e = s->ent[i];
        if (!e || e->users)
            continue;
        bool last = s->live == 1; /* then release_mapped frees s */
        plist_unlink(&c->idle, e);
        hash_unlink(c, e);
        release_mapped(c, e);
        if (last)
            return;
    }
}

struct bb_pgrant *bb_pgcache_take(struct bb_pgcache *c, uint32_t gref)
{
    unsigned b = bucket(gref);
    for (struct bb_pgrant *pg = c->buckets[b]; pg; pg = pg->hnext) {
        if (pg->gref == gref) {
            if (pg->users++ == 0)
                plist_unlink(&c->idle, pg); /* only a mapped entry is ever idle */
            return pg;
        }
    }
    /* Each turn drops at least the idle tail: bounded by the idle entries. */
    while (c->count >= c->max) {
        if (!c->idle.tail) {
            errno = ENOSPC;
            return NULL;
        }
        evict(c, c->idle.tail);
    }
    struct bb_pgrant *pg = calloc(1, sizeof(*pg));
    if (!pg)
        return NULL;
    pg->gref = gref;
    pg->users = 1;
    pg->hnext = c->buckets[b];
    c->buckets[b] = pg;
    plist_push_back(&c->pending, pg);
    c->count++;
    return pg;
}

/* Map e[0..n) in one call; on failure split in halves, down to single refs.
 * Depth at most log2(BB_PG_BATCH) + 1; with k bad refs about 2k log2(n)
 * calls. Returns the entries left unmapped (which leave the cache). */
static unsigned map_run(struct bb_pgcache *c, struct bb_pgrant **e, unsigned n, uint32_t *refs)
{
    for (unsigned i = 0; i < n; i++)
        refs[i] = e[i]->gref;
    struct bb_pgslab *s = calloc(1, sizeof(*s) + n * sizeof(s->ent[0]));
    unsigned char *addr = NULL;
    if (s) {
        c->calls++;
        addr = c->map(c->opaque, refs, n);
    }
    if (addr) {
        s->addr = addr;
        s->npages = n;
        s->live = n;
        for (unsigned i = 0; i < n; i++) {
            e[i]->page = addr + (size_t)i * PAGE;
            e[i]->slab = s;
            s->ent[i] = e[i];
        }
        c->maps += n;
        return 0;
    }
    free(s);
    if (n == 1) {
        /* Out of the cache for good; its takers see page NULL and fail. */
        hash_unlink(c, e[0]);
        c->count--;
        return 1;
    }
    return map_run(c, e, n / 2, refs) + map_run(c, e + n / 2, n - n / 2, refs);
}

unsigned bb_pgcache_fill(struct bb_pgcache *c)
{
    unsigned failed = 0;
    uint32_t refs[BB_PG_BATCH];
    /* Each turn takes up to BB_PG_BATCH entries off the pending list. */
    while (c->pending.head) {
        struct bb_pgrant *e[BB_PG_BATCH];
        unsigned n = 0;
        while (n < BB_PG_BATCH && c->pending.head) {
            e[n] = c->pending.head;
            plist_unlink(&c->pending, e[n]);
            n++;
        }
        failed += map_run(c, e, n, refs);
    }
    return failed;
}

void bb_pgcache_put(struct bb_pgcache *c, struct bb_pgrant *pg)
{
    if (!pg || --pg->users)
        return;
    if (pg->page) {
        plist_push_front(&c->idle, pg);
        return;
    }
    /* Never mapped: still pending (its request was dropped before the fill),
     * or its map failed (already out of the hash and the count). */
    bool pending = pg->prev || pg->next || c->pending.head == pg;
    if (pending) {
        plist_unlink(&c->pending, pg);
        hash_unlink(c, pg);
        c->count--;
    }
    free(pg);
}

unsigned bb_pgcache_count(const struct bb_pgcache *c)
{
    return c ? c->count : 0;
}

uint64_t bb_pgcache_maps(const struct bb_pgcache *c)
{
    return c ? c->maps : 0;
}

uint64_t bb_pgcache_calls(const struct bb_pgcache *c)
{
    return c ? c->calls : 0;
}
