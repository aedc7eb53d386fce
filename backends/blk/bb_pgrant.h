/* bb_pgrant.h - persistent grants: pages the frontend reuses, mapped once
 * (read-write, blkif.h note 8) and kept until the connection ends.
 *
 * Mapping is batched: a ring pass first takes every gref its requests use
 * (bb_pgcache_take), which leaves the ones not cached pending, then maps all
 * the pending ones at once (bb_pgcache_fill), BB_PG_BATCH refs per map call.
 * A map call gives one contiguous mapping that can only be unmapped whole
 * (xengnttab_unmap), so the pages of one call form a slab, unmapped when its
 * last entry leaves the cache. The bound counts pages mapped (slabs whole)
 * and pending; when full, the least recently used idle entry leaves, with
 * the other idle entries of its slab, and when every entry is busy the caller
 * maps the segment outside the cache.
 */
#ifndef BB_PGRANT_H
#define BB_PGRANT_H

#include <stdint.h>

/* Refs per map call: what one failure can take down before it is split, and
 * the most pages one busy entry can keep mapped after its slab-mates left. */
#define BB_PG_BATCH 128u

struct bb_pgslab;

struct bb_pgrant {
    uint32_t gref;
    void *page; /* NULL while pending, and for good once its map failed */
    unsigned users;
    struct bb_pgslab *slab;        /* NULL until mapped */
    struct bb_pgrant *hnext;       /* the hash chain, while cached */
    struct bb_pgrant *prev, *next; /* the idle list (most recent first), or the pending list */
};

/* Map n pages read-write into one contiguous range; NULL with errno. */
typedef void *bb_pg_map_fn(void *opaque, uint32_t *grefs, unsigned n);
/* Unmap a range bb_pg_map_fn returned, whole. */
typedef void bb_pg_unmap_fn(void *opaque, void *addr, unsigned n);

struct bb_pgcache;

struct bb_pgcache *bb_pgcache_new(unsigned max, bb_pg_map_fn *map, bb_pg_unmap_fn *unmap,
                                  void *opaque);
/* Unmap everything (the caller has put back every entry and finished all
 * I/O on the pages). NULL-safe. */
void bb_pgcache_free(struct bb_pgcache *c);

/* The entry of gref, taken for use (users + 1). A gref not cached gets a
 * pending entry (page NULL) that bb_pgcache_fill maps. NULL with errno:
 * ENOSPC (full, every entry busy) or ENOMEM. */
struct bb_pgrant *bb_pgcache_take(struct bb_pgcache *c, uint32_t gref);
/* Map every pending entry, BB_PG_BATCH refs a call. A call that fails is
 * split in halves until each ref that cannot be mapped is alone; such an
 * entry keeps page NULL and leaves the cache (a later take maps it anew).
 * Returns how many entries could not be mapped. */
unsigned bb_pgcache_fill(struct bb_pgcache *c);
/* Done with an entry from bb_pgcache_take. NULL-safe. */
void bb_pgcache_put(struct bb_pgcache *c, struct bb_pgrant *pg);

/* Pages mapped (or pending) now: what the bound counts. */
unsigned bb_pgcache_count(const struct bb_pgcache *c);
/* Pages mapped over the cache's life, and the map calls that mapped them
 * (for the disconnect log line). */
uint64_t bb_pgcache_maps(const struct bb_pgcache *c);
uint64_t bb_pgcache_calls(const struct bb_pgcache *c);

#endif
