/* bb_pgrant_test - the persistent grant cache (bb_pgrant.c): a gref is
 * mapped once and reused; what a pass takes is mapped in few calls, one
 * gref once however often it is taken; a bad ref in a batch is found and
 * fails alone; the bound counts pages mapped (a slab is unmapped whole, when
 * its last entry leaves); the least recently used idle entry leaves first,
 * with its slab's other idle entries; busy entries never leave; everything
 * is unmapped at the end. */
#define _GNU_SOURCE
#include "bb_pgrant.h"
#include "check.h"

#include <errno.h>
#include <stdlib.h>

#define PAGE 4096u

static int calls, maps, unmaps, live_slabs;

/* The test's mapper: n heap pages, each holding its gref; a call holding
 * a gref >= 600 fails, as a batch with one bad ref fails on Xen. */
static void *fake_map(void *opaque, uint32_t *grefs, unsigned n)
{
    (void)opaque;
    calls++;
    for (unsigned i = 0; i < n; i++) {
        if (grefs[i] >= 600) {
            errno = EINVAL;
            return NULL;
        }
    }
    unsigned char *p = malloc((size_t)n * PAGE);
    if (!p)
        return NULL;
    for (unsigned i = 0; i < n; i++)
        *(uint32_t *)(p + (size_t)i * PAGE) = grefs[i];
    maps += (int)n;
    live_slabs++;
    return p;
}

static void fake_unmap(void *opaque, void *addr, unsigned n)
{
    (void)opaque;
    unmaps += (int)n;
    live_slabs--;
    free(addr);
}

static struct bb_pgrant *get(struct bb_pgcache *c, uint32_t gref)
{
    struct bb_pgrant *pg = bb_pgcache_take(c, gref);
    if (pg)
        bb_pgcache_fill(c);
    return pg;
}

static void single_pages(void)
{
    calls = maps = unmaps = live_slabs = 0;
    struct bb_pgcache *c = bb_pgcache_new(3, fake_map, fake_unmap, NULL);
    CHECK(c != NULL);

    struct bb_pgrant *a = get(c, 10);
    CHECK(a && a->page && *(uint32_t *)a->page == 10);
    struct bb_pgrant *a2 = get(c, 10);
    CHECK(a2 == a);
    CHECK_EQ(maps, 1);
    CHECK_EQ(a->users, 2);
    bb_pgcache_put(c, a);
    bb_pgcache_put(c, a2);

    struct bb_pgrant *b = get(c, 11);
    struct bb_pgrant *d = get(c, 12);
    CHECK(b && d);
    bb_pgcache_put(c, b);
    bb_pgcache_put(c, d);
    CHECK_EQ(bb_pgcache_count(c), 3);

    /* Full: 10 is the least recently used idle entry, so 13 replaces it. */
    struct bb_pgrant *e = get(c, 13);
    CHECK(e != NULL);
    CHECK_EQ(unmaps, 1);
    CHECK_EQ(bb_pgcache_count(c), 3);
    bb_pgcache_put(c, e);
    /* 11 still cached: no new map. */
    int before = maps;
    struct bb_pgrant *b2 = get(c, 11);
    CHECK(b2 == b);
    CHECK_EQ(maps, before);

    /* All busy: ENOSPC, nothing dropped. */
    struct bb_pgrant *d2 = get(c, 12);
    struct bb_pgrant *e2 = get(c, 13);
    errno = 0;
    CHECK(bb_pgcache_take(c, 14) == NULL);
    CHECK_EQ(errno, ENOSPC);
    CHECK_EQ(bb_pgcache_count(c), 3);
    bb_pgcache_put(c, b2);
    bb_pgcache_put(c, d2);
    bb_pgcache_put(c, e2);

    /* A failed map: the entry comes back unmapped, leaves the cache, and a
     * later take tries again. */
    struct bb_pgrant *bad = bb_pgcache_take(c, 666);
    CHECK(bad != NULL);
    CHECK_EQ(bb_pgcache_fill(c), 1);
    CHECK(bad->page == NULL);
    CHECK_EQ(bb_pgcache_count(c), 2); /* it made room first: one idle entry left */
    bb_pgcache_put(c, bad);
    int calls_before = calls;
    bad = get(c, 666);
    CHECK(bad && !bad->page);
    CHECK_EQ(calls, calls_before + 1);
    bb_pgcache_put(c, bad);

    CHECK_EQ(bb_pgcache_maps(c), 4);
    bb_pgcache_free(c);
    CHECK_EQ(maps, unmaps);
    CHECK_EQ(live_slabs, 0);
}

static void batches(void)
{
    calls = maps = unmaps = live_slabs = 0;
    struct bb_pgcache *c = bb_pgcache_new(1056, fake_map, fake_unmap, NULL);
    struct bb_pgrant *pg[500], *dup[500];
    /* A pass of 300 refs, each taken twice (two requests on the same pages):
     * mapped once each, in ceil(300 / BB_PG_BATCH) calls. */
    for (unsigned i = 0; i < 300; i++) {
        pg[i] = bb_pgcache_take(c, 100 + i);
        dup[i] = bb_pgcache_take(c, 100 + i);
        CHECK(pg[i] && pg[i] == dup[i] && !pg[i]->page);
    }
    CHECK_EQ(bb_pgcache_count(c), 300);
    CHECK_EQ(bb_pgcache_fill(c), 0);
    CHECK_EQ(calls, (300 + BB_PG_BATCH - 1) / BB_PG_BATCH);
    CHECK_EQ(maps, 300);
    for (unsigned i = 0; i < 300; i++) {
        CHECK(pg[i]->page && *(uint32_t *)pg[i]->page == 100 + i);
        bb_pgcache_put(c, pg[i]);
        bb_pgcache_put(c, dup[i]);
    }
    /* Cached now: no call. */
    int before = calls;
    CHECK(get(c, 250) == pg[150]);
    CHECK_EQ(calls, before);
    bb_pgcache_put(c, pg[150]);

    /* Two bad refs among 100 new ones: the batch is split until each is
     * alone; the other 98 are mapped, in far fewer calls than 100. */
    before = calls;
    for (unsigned i = 0; i < 100; i++)
        pg[i] = bb_pgcache_take(c, i == 17 ? 601 : i == 80 ? 602 : 400 + i);
    CHECK_EQ(bb_pgcache_fill(c), 2);
    /* The 100, each half of 50, then two calls per level for each bad ref
     * (25, 13, 6, 3, 2, 1): 27 calls, against 100 one by one. */
    CHECK_EQ(calls - before, 27);
    for (unsigned i = 0; i < 100; i++) {
        if (i == 17 || i == 80)
            CHECK(pg[i]->page == NULL);
        else
            CHECK(pg[i]->page && *(uint32_t *)pg[i]->page == 400 + i);
        bb_pgcache_put(c, pg[i]);
    }
    CHECK_EQ(bb_pgcache_count(c), 398);

    /* A request dropped before the fill gives its pending entry back. */
    struct bb_pgrant *p = bb_pgcache_take(c, 599);
    CHECK(p && !p->page);
    CHECK_EQ(bb_pgcache_count(c), 399);
    bb_pgcache_put(c, p);
    CHECK_EQ(bb_pgcache_count(c), 398);
    CHECK_EQ(bb_pgcache_fill(c), 0);

    bb_pgcache_free(c);
    CHECK_EQ(maps, unmaps);
    CHECK_EQ(live_slabs, 0);
}

static void slab_bound(void)
{
    calls = maps = unmaps = live_slabs = 0;
    /* Room for 8 pages: one slab of 4 (refs 1-4), then one of 4 (5-8). */
    struct bb_pgcache *c = bb_pgcache_new(8, fake_map, fake_unmap, NULL);
    struct bb_pgrant *s1[4], *s2[4];
    for (unsigned i = 0; i < 4; i++)
        s1[i] = bb_pgcache_take(c, 1 + i);
    bb_pgcache_fill(c);
    for (unsigned i = 0; i < 4; i++)
        s2[i] = bb_pgcache_take(c, 5 + i);
    bb_pgcache_fill(c);
    CHECK_EQ(calls, 2);
    /* Slab 1 idle except ref 2; slab 2 idle. */
    for (unsigned i = 0; i < 4; i++) {
        if (i != 1)
            bb_pgcache_put(c, s1[i]);
        bb_pgcache_put(c, s2[i]);
    }
    CHECK_EQ(bb_pgcache_count(c), 8);
    /* A new ref needs room: the LRU tail (slab 1's idle entries) leaves but
     * its slab stays mapped for ref 2, so slab 2 goes too; pages mapped
     * never pass the bound. */
    struct bb_pgrant *n = get(c, 9);
    CHECK(n && n->page);
    CHECK_EQ(unmaps, 4);
    CHECK(bb_pgcache_count(c) <= 8);
    CHECK_EQ(bb_pgcache_count(c), 5);
    /* Ref 2 is still mapped and cached; its slab leaves with it. */
    CHECK(get(c, 2) == s1[1]);
    bb_pgcache_put(c, s1[1]);
    bb_pgcache_put(c, s1[1]);
    bb_pgcache_put(c, n);
    bb_pgcache_free(c);
    CHECK_EQ(maps, unmaps);
    CHECK_EQ(live_slabs, 0);
    bb_pgcache_free(NULL);
}

int main(void)
{
    single_pages();
    batches();
    slab_bound();
    return check_done("bb_pgrant_test");
}
