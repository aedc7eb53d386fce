/* bb_pgrant.c - the persistent grant cache: a hash by gref and an LRU list
 * of idle entries. Busy entries are off the list, so the list's tail is
 * always evictable.
 */
#define _GNU_SOURCE
#include "bb_pgrant.h"

#include <errno.h>
#include <stdlib.h>

#define NBUCKETS 1024u

struct bb_pgcache {
    unsigned max, count;
    uint64_t maps;
    bb_pg_map_fn *map;
    bb_pg_unmap_fn *unmap;
    void *opaque;
    struct bb_pgrant *idle_head, *idle_tail;
    struct bb_pgrant *buckets[NBUCKETS];
};

static unsigned bucket(uint32_t gref)
{
    return (gref * 2654435761u) >> 22; /* top 10 bits */
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

void bb_pgcache_free(struct bb_pgcache *c)
{
    if (!c)
        return;
    for (unsigned i = 0; i < NBUCKETS; i++) {
        for (struct bb_pgrant *pg = c->buckets[i], *next; pg; pg = next) {
            next = pg->hnext;
            c->unmap(c->opaque, pg->page);
            free(pg);
        }
    }
    free(c);
}

static void idle_unlink(struct bb_pgcache *c, struct bb_pgrant *pg)
{
    if (pg->prev)
        pg->prev->next = pg->next;
    else
        c->idle_head = pg->next;
    if (pg->next)
        pg->next->prev = pg->prev;
    else
        c->idle_tail = pg->prev;
    pg->prev = pg->next = NULL;
}

static void idle_push(struct bb_pgcache *c, struct bb_pgrant *pg)
{
    pg->prev = NULL;
    pg->next = c->idle_head;
    if (c->idle_head)
        c->idle_head->prev = pg;
    else
        c->idle_tail = pg;
    c->idle_head = pg;
}

static void evict(struct bb_pgcache *c, struct bb_pgrant *pg)
{
    idle_unlink(c, pg);
    for (struct bb_pgrant **p = &c->buckets[bucket(pg->gref)]; *p; p = &(*p)->hnext) {
        if (*p == pg) {
            *p = pg->hnext;
            break;
        }
    }
    c->unmap(c->opaque, pg->page);
    free(pg);
    c->count--;
}

struct bb_pgrant *bb_pgcache_get(struct bb_pgcache *c, uint32_t gref)
{
    unsigned b = bucket(gref);
    for (struct bb_pgrant *pg = c->buckets[b]; pg; pg = pg->hnext) {
        if (pg->gref == gref) {
            if (pg->users++ == 0)
                idle_unlink(c, pg);
            return pg;
        }
    }
    if (c->count >= c->max) {
        if (!c->idle_tail) {
            errno = ENOSPC;
            return NULL;
        }
        evict(c, c->idle_tail);
    }
    struct bb_pgrant *pg = calloc(1, sizeof(*pg));
    if (!pg)
        return NULL;
    pg->page = c->map(c->opaque, gref);
    if (!pg->page) {
        int e = errno;
        free(pg);
        errno = e;
        return NULL;
    }
    pg->gref = gref;
    pg->users = 1;
    pg->hnext = c->buckets[b];
    c->buckets[b] = pg;
    c->count++;
    c->maps++;
    return pg;
}

void bb_pgcache_put(struct bb_pgcache *c, struct bb_pgrant *pg)
{
    if (pg && --pg->users == 0)
        idle_push(c, pg);
}

unsigned bb_pgcache_count(const struct bb_pgcache *c)
{
    return c ? c->count : 0;
}

uint64_t bb_pgcache_maps(const struct bb_pgcache *c)
{
    return c ? c->maps : 0;
}
