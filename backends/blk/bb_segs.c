/* bb_segs.c - grant mappings of a request's pages.
 *
 * With persistent grants, each page comes from the queue's cache (mapped
 * read-write once): bb_segs_take takes the entries, the ring pass maps every
 * pending one in a few calls (bb_pgcache_fill), bb_segs_map picks up the
 * pages. What is not in the cache (every page without persistent grants;
 * with them, pages that found the cache full of busy entries) is mapped for
 * the request alone, in one call (read-only for a write, read-write for a
 * read), and unmapped on completion. A failed map fails the requests that
 * use the ref, nothing else. Indirect segment pages are read the same way:
 * all of a pass's in one call, a request alone if that fails.
 */
#define _GNU_SOURCE
#include "bb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *bb_pg_map(void *opaque, uint32_t *grefs, unsigned n)
{
    struct bb_queue *q = opaque;
    struct be_dev *be = q->d->be;
    return xengnttab_map_domain_grant_refs(be_gnttab(be), n, be_fe_domid(be), grefs,
                                           PROT_READ | PROT_WRITE);
}

void bb_pg_unmap(void *opaque, void *addr, unsigned n)
{
    struct bb_queue *q = opaque;
    xengnttab_unmap(be_gnttab(q->d->be), addr, n);
}

/* Copy r's segments once out of its mapped indirect pages; only the copy is
 * checked and used. -1 if out of memory. */
static int copy_segs(struct bb_req *r, const unsigned char *map)
{
    r->segs = calloc(r->p.nseg, sizeof(*r->segs));
    if (!r->segs)
        return -1;
    for (unsigned i = 0; i < r->p.nseg; i++) {
        struct blkif_request_segment s;
        memcpy(&s, map + (size_t)i * sizeof(s), sizeof(s));
        r->segs[i].gref = s.gref;
        r->segs[i].first = s.first_sect;
        r->segs[i].last = s.last_sect;
    }
    return 0;
}

int bb_segs_indirect(struct bb_req *r, const char **why)
{
    struct be_dev *be = r->q->d->be;
    unsigned npages = r->p.nr_indirect_pages;
    const unsigned char *map = xengnttab_map_domain_grant_refs(
        be_gnttab(be), npages, be_fe_domid(be), r->p.indirect_grefs, PROT_READ);
    if (!map) {
        *why = "indirect segment pages cannot be mapped";
        return BLKIF_RSP_ERROR;
    }
    int rc = copy_segs(r, map);
    xengnttab_unmap(be_gnttab(be), (void *)map, npages);
    if (rc < 0) {
        *why = "out of memory";
        return BLKIF_RSP_ERROR;
    }
    return BLKIF_RSP_OKAY;
}

int bb_segs_indirect_batch(struct bb_req **v, unsigned n)
{
    struct be_dev *be = v[0]->q->d->be;
    uint32_t refs[BB_IND_BATCH];
    unsigned npages = 0;
    for (unsigned i = 0; i < n; i++) {
        for (unsigned k = 0; k < v[i]->p.nr_indirect_pages; k++) {
            if (npages == BB_IND_BATCH) { /* the caller keeps within it */
                errno = E2BIG;
                return -1;
            }
            refs[npages++] = v[i]->p.indirect_grefs[k];
        }
    }
    const unsigned char *map =
        xengnttab_map_domain_grant_refs(be_gnttab(be), npages, be_fe_domid(be), refs, PROT_READ);
    if (!map)
        return -1;
    /* A request whose copy fails (out of memory) keeps segs NULL: the caller
     * reads it alone, which says why. */
    size_t off = 0;
    for (unsigned i = 0; i < n; i++) {
        copy_segs(v[i], map + off * BB_PAGE_SIZE);
        off += v[i]->p.nr_indirect_pages;
    }
    xengnttab_unmap(be_gnttab(be), (void *)map, npages);
    return 0;
}

static int alloc_arrays(struct bb_req *r)
{
    unsigned n = r->p.nseg;
    if (n <= BLKIF_MAX_SEGMENTS_PER_REQUEST) {
        r->page = r->page_inline;
        r->pg = r->pg_inline;
        r->iov = r->iov_inline;
        memset(r->page_inline, 0, sizeof(r->page_inline));
        memset(r->pg_inline, 0, sizeof(r->pg_inline));
        return 0;
    }
    r->page = calloc(n, sizeof(*r->page));
    r->pg = calloc(n, sizeof(*r->pg));
    r->iov = calloc(n, sizeof(*r->iov));
    if (r->page && r->pg && r->iov)
        return 0;
    free(r->page);
    free(r->pg);
    free(r->iov);
    r->page = NULL;
    r->pg = NULL;
    r->iov = NULL;
    errno = ENOMEM;
    return -1;
}

int bb_segs_take(struct bb_req *r)
{
    if (alloc_arrays(r) < 0)
        return -1;
    struct bb_pgcache *c = r->q->pgc;
    for (unsigned i = 0; c && i < r->p.nseg; i++) {
        r->pg[i] = bb_pgcache_take(c, r->segs[i].gref);
        /* ENOSPC: every cached page is busy; mapped outside the cache. */
        if (!r->pg[i] && errno != ENOSPC)
            return -1;
    }
    return 0;
}

/* The segments outside the cache (all of them without persistent grants) in
 * one call: read-only for a write, read-write for a read. */
static int map_transient(struct bb_req *r)
{
    struct be_dev *be = r->q->d->be;
    int prot = r->p.kind == BB_READ ? PROT_READ | PROT_WRITE : PROT_READ;
    uint32_t refs[BB_MAX_INDIRECT_SEGS];
    unsigned n = 0;
    if (r->p.nseg > BB_MAX_INDIRECT_SEGS) { /* bb_decode refuses more */
        errno = E2BIG;
        return -1;
    }
    for (unsigned i = 0; i < r->p.nseg; i++)
        if (!r->pg[i])
            refs[n++] = r->segs[i].gref;
    if (!n)
        return 0;
    r->tmap = xengnttab_map_domain_grant_refs(be_gnttab(be), n, be_fe_domid(be), refs, prot);
    if (!r->tmap)
        return -1;
    r->tmap_n = n;
    for (unsigned i = 0, k = 0; i < r->p.nseg; i++)
        if (!r->pg[i])
            r->page[i] = (char *)r->tmap + (size_t)k++ * BB_PAGE_SIZE;
    return 0;
}

int bb_segs_map(struct bb_req *r, uint32_t *bad_gref)
{
    *bad_gref = UINT32_MAX;
    for (unsigned i = 0; i < r->p.nseg; i++) {
        if (!r->pg[i])
            continue;
        if (!r->pg[i]->page) { /* its map failed in bb_pgcache_fill */
            *bad_gref = r->segs[i].gref;
            errno = EINVAL; /* what gntdev gives for a ref it cannot map */
            return -1;
        }
        r->page[i] = r->pg[i]->page;
    }
    if (map_transient(r) < 0)
        return -1;
    /* One iovec per run of contiguous sectors. */
    r->niov = 0;
    for (unsigned i = 0; i < r->p.nseg; i++) {
        char *base = (char *)r->page[i] + r->segs[i].first * BB_SECTOR_SIZE;
        size_t len = (size_t)(r->segs[i].last - r->segs[i].first + 1) * BB_SECTOR_SIZE;
        struct iovec *prev = r->niov ? &r->iov[r->niov - 1] : NULL;
        if (prev && (char *)prev->iov_base + prev->iov_len == base) {
            prev->iov_len += len;
        } else {
            r->iov[r->niov].iov_base = base;
            r->iov[r->niov].iov_len = len;
            r->niov++;
        }
    }
    return 0;
}

void bb_segs_unmap(struct bb_req *r)
{
    if (r->tmap) {
        xengnttab_unmap(be_gnttab(r->q->d->be), r->tmap, r->tmap_n);
        r->tmap = NULL;
        r->tmap_n = 0;
    }
    for (unsigned i = 0; r->pg && i < r->p.nseg; i++) {
        bb_pgcache_put(r->q->pgc, r->pg[i]);
        r->pg[i] = NULL;
        r->page[i] = NULL;
    }
    r->q->d->mapped -= r->held;
    r->held = 0;
    r->niov = 0;
}

void bb_req_release(struct bb_req *r)
{
    struct bb_queue *q = r->q;
    bb_segs_unmap(r);
    if (r->page && r->page != r->page_inline) {
        free(r->page);
        free(r->pg);
        free(r->iov);
    }
    if (r->segs && r->segs != r->p.direct)
        free(r->segs);
    memset(r, 0, sizeof(*r));
    r->q = q;
    r->next = q->free;
    q->free = r;
}
