/* bb_segs.c - grant mappings of a request's pages.
 *
 * Without persistent grants, all of a request's pages are mapped in one call
 * (read-only for a write, read-write for a read) and unmapped on completion.
 * With them, each page comes from the queue's cache (mapped read-write once);
 * when the cache is full of busy pages, a page is mapped alone for this
 * request. A failed map fails the request, nothing else.
 */
#define _GNU_SOURCE
#include "bb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *bb_pg_map(void *opaque, uint32_t gref)
{
    struct bb_queue *q = opaque;
    struct be_dev *be = q->d->be;
    return xengnttab_map_grant_ref(be_gnttab(be), be_fe_domid(be), gref, PROT_READ | PROT_WRITE);
}

void bb_pg_unmap(void *opaque, void *page)
{
    struct bb_queue *q = opaque;
    xengnttab_unmap(be_gnttab(q->d->be), page, 1);
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
    r->segs = calloc(r->p.nseg, sizeof(*r->segs));
    if (!r->segs) {
        xengnttab_unmap(be_gnttab(be), (void *)map, npages);
        *why = "out of memory";
        return BLKIF_RSP_ERROR;
    }
    /* Copy once out of the shared pages; only the copy is checked and used. */
    for (unsigned i = 0; i < r->p.nseg; i++) {
        struct blkif_request_segment s;
        memcpy(&s, map + (size_t)i * sizeof(s), sizeof(s));
        r->segs[i].gref = s.gref;
        r->segs[i].first = s.first_sect;
        r->segs[i].last = s.last_sect;
    }
    xengnttab_unmap(be_gnttab(be), (void *)map, npages);
    return BLKIF_RSP_OKAY;
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

static int map_persistent(struct bb_req *r, int prot)
{
    struct bb_queue *q = r->q;
    struct be_dev *be = q->d->be;
    for (unsigned i = 0; i < r->p.nseg; i++) {
        r->pg[i] = bb_pgcache_get(q->pgc, r->segs[i].gref);
        if (r->pg[i]) {
            r->page[i] = r->pg[i]->page;
            continue;
        }
        if (errno != ENOSPC)
            return -1;
        r->page[i] = xengnttab_map_grant_ref(be_gnttab(be), be_fe_domid(be), r->segs[i].gref, prot);
        if (!r->page[i])
            return -1;
    }
    return 0;
}

static int map_transient(struct bb_req *r, int prot)
{
    struct be_dev *be = r->q->d->be;
    uint32_t refs_inline[BLKIF_MAX_SEGMENTS_PER_REQUEST];
    uint32_t *refs = r->p.nseg <= BLKIF_MAX_SEGMENTS_PER_REQUEST ? refs_inline
                                                                 : calloc(r->p.nseg, sizeof(*refs));
    if (!refs)
        return -1;
    for (unsigned i = 0; i < r->p.nseg; i++)
        refs[i] = r->segs[i].gref;
    r->tmap =
        xengnttab_map_domain_grant_refs(be_gnttab(be), r->p.nseg, be_fe_domid(be), refs, prot);
    int e = errno;
    if (refs != refs_inline)
        free(refs);
    if (!r->tmap) {
        errno = e;
        return -1;
    }
    for (unsigned i = 0; i < r->p.nseg; i++)
        r->page[i] = (char *)r->tmap + (size_t)i * BB_PAGE_SIZE;
    return 0;
}

int bb_segs_map(struct bb_req *r)
{
    /* A read fills the frontend's pages: they must be mapped writable. */
    int prot = r->p.kind == BB_READ ? PROT_READ | PROT_WRITE : PROT_READ;
    if (alloc_arrays(r) < 0)
        return -1;
    struct bb_dev *d = r->q->d;
    r->held = r->p.nseg;
    d->mapped += r->held;
    if (d->mapped > d->mapped_peak)
        d->mapped_peak = d->mapped;
    if ((r->q->pgc ? map_persistent(r, prot) : map_transient(r, prot)) < 0) {
        int e = errno;
        bb_segs_unmap(r);
        errno = e;
        return -1;
    }
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
    xengnttab_handle *gt = be_gnttab(r->q->d->be);
    if (r->tmap) {
        xengnttab_unmap(gt, r->tmap, r->p.nseg);
        r->tmap = NULL;
    } else if (r->page) {
        for (unsigned i = 0; i < r->p.nseg; i++) {
            if (r->pg[i])
                bb_pgcache_put(r->q->pgc, r->pg[i]);
            else if (r->page[i])
                xengnttab_unmap(gt, r->page[i], 1);
            r->pg[i] = NULL;
            r->page[i] = NULL;
        }
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
