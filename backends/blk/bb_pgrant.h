/* bb_pgrant.h - persistent grants: pages the frontend reuses, mapped once
 * (read-write, blkif.h note 8) and kept until the connection ends. The cache
 * is bounded; when full, the least recently used idle mapping is dropped,
 * and when every mapping is busy the caller maps the segment transiently.
 */
#ifndef BB_PGRANT_H
#define BB_PGRANT_H

#include <stdint.h>

struct bb_pgrant {
    uint32_t gref;
    void *page;
    unsigned users; /* requests using it now; idle at 0 */
    struct bb_pgrant *hnext;
    struct bb_pgrant *prev, *next; /* the idle list, most recent first */
};

/* Map one page read-write; NULL with errno on failure. */
typedef void *bb_pg_map_fn(void *opaque, uint32_t gref);
typedef void bb_pg_unmap_fn(void *opaque, void *page);

struct bb_pgcache;

struct bb_pgcache *bb_pgcache_new(unsigned max, bb_pg_map_fn *map, bb_pg_unmap_fn *unmap,
                                  void *opaque);
/* Unmap everything (the caller has finished all I/O on the pages). NULL-safe. */
void bb_pgcache_free(struct bb_pgcache *c);

/* The mapping of gref, taken for use (users + 1), mapping it if needed.
 * NULL with errno: ENOSPC (full, all busy), or the map's errno. */
struct bb_pgrant *bb_pgcache_get(struct bb_pgcache *c, uint32_t gref);
/* Done with a mapping from bb_pgcache_get. */
void bb_pgcache_put(struct bb_pgcache *c, struct bb_pgrant *pg);

unsigned bb_pgcache_count(const struct bb_pgcache *c);
/* Mappings made over the cache's life (for the disconnect log line). */
uint64_t bb_pgcache_maps(const struct bb_pgcache *c);

#endif
