/* blk_pool.h - a pool of data pages granted to one backend domain, reused
 * from request to request (persistent grants, blkif.h note 7), LIFO so that
 * a backend that keeps only some mapped keeps the hot ones. Pages are shared
 * in chunks through gntshr (gntalloc on a real guest) as the pool grows, up
 * to a limit: the guest's grant budget. The pool belongs to one connection:
 * a new backend gets a new pool, and the old pages are unshared, never
 * written again. */
#ifndef BLK_POOL_H
#define BLK_POOL_H

#include <stdbool.h>
#include <stdint.h>
#include <xengnttab.h>

#define BLK_POOL_CHUNK 32u /* pages shared at a time */

struct blk_pool {
    xengntshr_handle *gs;
    uint32_t domid;
    unsigned max_pages, npages;
    void **chunk_mem; /* by chunk */
    unsigned nchunks;
    uint8_t **addr; /* by page */
    uint32_t *ref;  /* by page */
    uint32_t *free; /* stack of free page numbers */
    unsigned nfree;
};

/* An empty pool for pages granted (writable) to domid, at most max_pages.
 * 0 or -1 (ENOMEM, EINVAL). */
int blk_pool_init(struct blk_pool *p, xengntshr_handle *gs, uint32_t domid, unsigned max_pages);
/* Unshare every page (NULL-safe, safe on a zeroed pool). */
void blk_pool_fini(struct blk_pool *p);
/* Release a pool a chunk at a time: unshare its last chunk; true while
 * chunks remain, false once it is finished (as blk_pool_fini). No get or put
 * on a pool being released. */
bool blk_pool_release_step(struct blk_pool *p);

/* Take a page, growing the pool if needed. Returns its number, or -1 when
 * the pool is at its limit and every page is in use (or sharing failed). */
int blk_pool_get(struct blk_pool *p);
void blk_pool_put(struct blk_pool *p, unsigned page);
/* Share pages ahead of need until the pool holds n (at most its limit): a
 * hot standby's pool, so that its first requests after a promotion wait for
 * no sharing. 0 or -1 (errno; the pages shared so far stay). */
int blk_pool_prefill(struct blk_pool *p, unsigned n);
/* Free pages, counting those the pool could still share. */
unsigned blk_pool_available(const struct blk_pool *p);

static inline uint8_t *blk_pool_addr(const struct blk_pool *p, unsigned page)
{
    return p->addr[page];
}

static inline uint32_t blk_pool_ref(const struct blk_pool *p, unsigned page)
{
    return p->ref[page];
}

#endif
