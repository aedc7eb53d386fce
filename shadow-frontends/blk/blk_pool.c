/* blk_pool.c - granted data pages. */
#define _GNU_SOURCE
#include "blk_pool.h"

#include "blk_xen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int blk_pool_init(struct blk_pool *p, xengntshr_handle *gs, uint32_t domid, unsigned max_pages)
{
    memset(p, 0, sizeof(*p));
    if (!max_pages) {
        errno = EINVAL;
        return -1;
    }
    unsigned maxchunks = (max_pages + BLK_POOL_CHUNK - 1) / BLK_POOL_CHUNK;
    p->gs = gs;
    p->domid = domid;
    p->max_pages = max_pages;
    p->chunk_mem = calloc(maxchunks, sizeof(*p->chunk_mem));
    p->addr = calloc(max_pages, sizeof(*p->addr));
    p->ref = calloc(max_pages, sizeof(*p->ref));
    p->free = calloc(max_pages, sizeof(*p->free));
    if (!p->chunk_mem || !p->addr || !p->ref || !p->free) {
        blk_pool_fini(p);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void blk_pool_fini(struct blk_pool *p)
{
    if (!p)
        return;
    for (unsigned c = 0; c < p->nchunks; c++) {
        unsigned n = p->npages - c * BLK_POOL_CHUNK;
        if (n > BLK_POOL_CHUNK)
            n = BLK_POOL_CHUNK;
        xengntshr_unshare(p->gs, p->chunk_mem[c], n);
    }
    free(p->chunk_mem);
    free(p->addr);
    free(p->ref);
    free(p->free);
    memset(p, 0, sizeof(*p));
}

bool blk_pool_release_step(struct blk_pool *p)
{
    if (p->nchunks) {
        /* Chunks fill in order: the last holds what is past the others. */
        unsigned c = --p->nchunks, n = p->npages - c * BLK_POOL_CHUNK;
        xengntshr_unshare(p->gs, p->chunk_mem[c], n < BLK_POOL_CHUNK ? n : BLK_POOL_CHUNK);
        p->npages = c * BLK_POOL_CHUNK;
        p->nfree = 0; /* the free stack named pages of that chunk */
    }
    if (p->nchunks)
        return true;
    blk_pool_fini(p);
    return false;
}

static int grow(struct blk_pool *p)
{
    unsigned n = p->max_pages - p->npages;
    if (n > BLK_POOL_CHUNK)
        n = BLK_POOL_CHUNK;
    if (!n)
        return -1;
    uint32_t refs[BLK_POOL_CHUNK];
    uint8_t *mem = xengntshr_share_pages(p->gs, p->domid, (int)n, refs, 1);
    if (!mem)
        return -1;
    p->chunk_mem[p->nchunks++] = mem;
    /* Push in reverse so that the lowest page is taken first. */
    for (unsigned i = 0; i < n; i++) {
        unsigned page = p->npages + i;
        p->addr[page] = mem + (size_t)i * BLK_PAGE_SIZE;
        p->ref[page] = refs[i];
    }
    for (unsigned i = n; i-- > 0;)
        p->free[p->nfree++] = p->npages + i;
    p->npages += n;
    return 0;
}

int blk_pool_get(struct blk_pool *p)
{
    if (!p->nfree && grow(p) < 0)
        return -1;
    return (int)p->free[--p->nfree];
}

void blk_pool_put(struct blk_pool *p, unsigned page)
{
    p->free[p->nfree++] = page;
}

int blk_pool_prefill(struct blk_pool *p, unsigned n)
{
    if (n > p->max_pages)
        n = p->max_pages;
    /* Each round shares at least one page or fails: at most n rounds. */
    for (unsigned round = 0; p->npages < n && round < n; round++)
        if (grow(p) < 0)
            return -1;
    return 0;
}

unsigned blk_pool_available(const struct blk_pool *p)
{
    return p->nfree + (p->max_pages - p->npages);
}
