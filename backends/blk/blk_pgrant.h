/* blk_pgrant.h - persistent grants: pages the frontend reuses, mapped once
 * (read-write, blkif.h note 8) and kept until the connection ends. The cache
 * is bounded; when full, the least recently used idle mapping is dropped,
 * and when every mapping is busy the caller maps the segment transiently.
 */
#ifndef BLK_PGRANT_H
#define BLK_PGRANT_H

#include <stdint.h>

struct blk_pgrant {
    uint32_t gref;
    void *page;
    unsigned users; /* requests using it now; idle at 0 */
    struct blk_pgrant *hnext;
    struct blk_pgrant *prev, *next; /* the idle list, most recent first */
};

/* Map one page read-write; NULL with errno on failure. */
typedef void *blk_pg_map_fn(void *opaque, uint32_t gref);
typedef void blk_pg_unmap_fn(void *opaque, void *page);

struct blk_pgcache;

struct blk_pgcache *blk_pgcache_new(unsigned max, blk_pg_map_fn *map, blk_pg_unmap_fn *unmap,
                                    void *opaque);
/* Unmap everything (the caller has finished all I/O on the pages). NULL-safe. */
void blk_pgcache_free(struct blk_pgcache *c);

/* The mapping of gref, taken for use (users + 1), mapping it if needed.
 * NULL with errno: ENOSPC (full, all busy), or the map's errno. */
struct blk_pgrant *blk_pgcache_get(struct blk_pgcache *c, uint32_t gref);
/* Done with a mapping from blk_pgcache_get. */
void blk_pgcache_put(struct blk_pgcache *c, struct blk_pgrant *pg);

unsigned blk_pgcache_count(const struct blk_pgcache *c);
/* Mappings made over the cache's life (for the disconnect log line). */
uint64_t blk_pgcache_maps(const struct blk_pgcache *c);

#endif
