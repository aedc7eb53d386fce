/* bb_pgrant_test - the persistent grant cache (bb_pgrant.c): a gref is
 * mapped once and reused, the bound holds, the least recently used idle
 * mapping is the one dropped, busy mappings are never dropped, map failures
 * reach the caller, and everything is unmapped at the end. */
#define _GNU_SOURCE
#include "bb_pgrant.h"
#include "check.h"

#include <errno.h>
#include <stdlib.h>

static int maps, unmaps;

/* The test's mapper: a heap page per gref; gref 666 cannot be mapped. */
static void *fake_map(void *opaque, uint32_t gref)
{
    (void)opaque;
    if (gref == 666) {
        errno = EFAULT;
        return NULL;
    }
    uint32_t *p = malloc(4096);
    if (p)
        *p = gref;
    maps++;
    return p;
}

static void fake_unmap(void *opaque, void *page)
{
    (void)opaque;
    unmaps++;
    free(page);
}

int main(void)
{
    struct bb_pgcache *c = bb_pgcache_new(3, fake_map, fake_unmap, NULL);
    CHECK(c != NULL);

    struct bb_pgrant *a = bb_pgcache_get(c, 10);
    CHECK(a && *(uint32_t *)a->page == 10);
    struct bb_pgrant *a2 = bb_pgcache_get(c, 10);
    CHECK(a2 == a);
    CHECK_EQ(maps, 1);
    CHECK_EQ(a->users, 2);
    bb_pgcache_put(c, a);
    bb_pgcache_put(c, a2);

    struct bb_pgrant *b = bb_pgcache_get(c, 11);
    struct bb_pgrant *d = bb_pgcache_get(c, 12);
    CHECK(b && d);
    bb_pgcache_put(c, b);
    bb_pgcache_put(c, d);
    CHECK_EQ(bb_pgcache_count(c), 3);

    /* Full: 10 is the least recently used idle entry, so 13 replaces it. */
    struct bb_pgrant *e = bb_pgcache_get(c, 13);
    CHECK(e != NULL);
    CHECK_EQ(unmaps, 1);
    CHECK_EQ(bb_pgcache_count(c), 3);
    bb_pgcache_put(c, e);
    /* 11 still cached: no new map. */
    int before = maps;
    struct bb_pgrant *b2 = bb_pgcache_get(c, 11);
    CHECK(b2 == b);
    CHECK_EQ(maps, before);

    /* All busy: ENOSPC, nothing dropped. */
    struct bb_pgrant *d2 = bb_pgcache_get(c, 12);
    struct bb_pgrant *e2 = bb_pgcache_get(c, 13);
    errno = 0;
    CHECK(bb_pgcache_get(c, 14) == NULL);
    CHECK_EQ(errno, ENOSPC);
    CHECK_EQ(bb_pgcache_count(c), 3);
    bb_pgcache_put(c, b2);
    bb_pgcache_put(c, d2);
    bb_pgcache_put(c, e2);

    /* A failed map reaches the caller with its errno and leaves the cache as it was. */
    errno = 0;
    CHECK(bb_pgcache_get(c, 666) == NULL);
    CHECK_EQ(errno, EFAULT);

    CHECK_EQ(bb_pgcache_maps(c), 4);
    bb_pgcache_free(c);
    CHECK_EQ(maps, unmaps);
    bb_pgcache_free(NULL);
    return check_done("bb_pgrant_test");
}
