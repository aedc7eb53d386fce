/* gnttab.c - drop-in libxengnttab.so.1 for xensim: xengnttab_* (mapping and
 * copying grants of other domains, as Linux's gntdev does) and xengntshr_*
 * (sharing pages, as Linux's gntalloc does), with Debian's symbols and
 * version nodes (libxengnttab.map). Pages are memfds; see ../proto/hyp_proto.h.
 *
 * Differences from Xen's library on Linux, all where Linux would be looser:
 * xengntshr_unshare takes exactly a region returned by xengntshr_share_*
 * (Linux munmaps whatever range it is given); xengnttab_close and
 * xengntshr_close unmap what the handle still maps (as documented; Linux keeps
 * the mappings until munmap); dmabuf is not supported (EOPNOTSUPP).
 */
#define _GNU_SOURCE
#include "client.h"

#include "hyp_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xengnttab.h>

/* Objects (shares of other domains) kept mapped for grant copies. */
#define COPY_OBJ_SLOTS 256
/* Other domains' grant tables kept mapped for grant copies. */
#define COPY_TAB_SLOTS 16

/* What a handle has mapped (xengnttab) or shared (xengntshr). */
struct region {
    uint8_t *addr;
    uint32_t count; /* pages */
    uint32_t nids;
    uint32_t *ids; /* daemon map ids (a map is done in chunks), or the one object id */
    struct region *next;
};

struct copy_obj {
    uint32_t id;
    uint8_t *base; /* NULL: empty slot */
    uint32_t npages;
    bool writable;
};

struct copy_tab {
    const struct hyp_gtab_entry *e; /* NULL: empty slot */
    uint32_t domid;
    uint32_t nr;
};

struct xengntdev_handle {
    struct xsim_client c;
    uint32_t kind;
    pid_t pid;
    pthread_mutex_t lock; /* regions and the copy caches */
    struct region *regions;
    struct copy_obj objs[COPY_OBJ_SLOTS];
    struct copy_tab tabs[COPY_TAB_SLOTS];
};

static struct xengntdev_handle *handle_open(uint32_t kind, struct xentoollog_logger *logger,
                                            const char *ctx)
{
    struct xengntdev_handle *h = calloc(1, sizeof(*h));
    if (!h) {
        xsim_client_log(logger, ctx, errno, "could not allocate a handle");
        return NULL;
    }
    if (pthread_mutex_init(&h->lock, NULL)) {
        free(h);
        errno = ENOMEM;
        return NULL;
    }
    if (xsim_client_open(&h->c, kind, 1, -1, NULL, logger, ctx) < 0) {
        int e = errno;
        pthread_mutex_destroy(&h->lock);
        free(h);
        errno = e;
        return NULL;
    }
    h->kind = kind;
    h->pid = getpid();
    return h;
}

static bool is_kind(const struct xengntdev_handle *h, uint32_t kind)
{
    if (h && h->kind == kind)
        return true;
    errno = EINVAL;
    return false;
}

static void drop_tab(struct copy_tab *t)
{
    if (t->e)
        munmap((void *)t->e, (size_t)t->nr * sizeof(*t->e));
    t->e = NULL;
}

static void drop_obj(struct copy_obj *o)
{
    if (o->base)
        munmap(o->base, (size_t)o->npages * HYP_PAGE_SIZE);
    o->base = NULL;
}

static int handle_close(struct xengntdev_handle *h)
{
    if (!h)
        return 0;
    /* In a forked child only the shares are inherited (the rest is
     * MADV_DONTFORK), and the daemon connection is the parent's. */
    bool child = h->pid != getpid();
    if (!child)
        xsim_client_post(&h->c, HYP_BYE, NULL, 0); /* closed, not died: notify */
    while (h->regions) {
        struct region *r = h->regions;
        h->regions = r->next;
        if (!child || h->kind == HYP_KIND_GNTSHR)
            munmap(r->addr, (size_t)r->count * HYP_PAGE_SIZE);
        free(r->ids);
        free(r);
    }
    if (!child) {
        for (unsigned i = 0; i < COPY_OBJ_SLOTS; i++)
            drop_obj(&h->objs[i]);
        for (unsigned i = 0; i < COPY_TAB_SLOTS; i++)
            drop_tab(&h->tabs[i]);
    }
    xsim_client_close(&h->c);
    pthread_mutex_destroy(&h->lock);
    free(h);
    return 0;
}

static void region_add(struct xengntdev_handle *h, struct region *r)
{
    pthread_mutex_lock(&h->lock);
    r->next = h->regions;
    h->regions = r;
    pthread_mutex_unlock(&h->lock);
}

/* Unlink the region that starts at addr and has count pages. */
static struct region *region_take(struct xengntdev_handle *h, void *addr, uint32_t count)
{
    pthread_mutex_lock(&h->lock);
    struct region **pp = &h->regions;
    while (*pp && ((*pp)->addr != addr || (*pp)->count != count))
        pp = &(*pp)->next;
    struct region *r = *pp;
    if (r)
        *pp = r->next;
    pthread_mutex_unlock(&h->lock);
    return r;
}

static void unmap_ids(struct xengntdev_handle *h, const uint32_t *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        struct hyp_u32 req = {ids[i]};
        xsim_client_call(&h->c, HYP_GNT_UNMAP, &req, sizeof(req), NULL, 0, NULL, 0, NULL, NULL,
                         NULL);
    }
}

/* ---- xengnttab --------------------------------------------------------------- */

XSIM_EXPORT xengnttab_handle *xengnttab_open(struct xentoollog_logger *logger, unsigned open_flags)
{
    (void)open_flags;
    return handle_open(HYP_KIND_GNTTAB, logger, "gnttab");
}

XSIM_EXPORT int xengnttab_close(xengnttab_handle *xgt)
{
    return handle_close(xgt);
}

XSIM_EXPORT int xengnttab_fd(xengnttab_handle *xgt)
{
    if (!xgt) {
        errno = EINVAL;
        return -1;
    }
    return xgt->c.sock;
}

/* Map one chunk (at most HYP_MAP_MAX_REFS refs) at base; 0 or -1 with errno. */
static int map_chunk(struct xengntdev_handle *h, uint8_t *base, uint32_t n, const uint32_t *domids,
                     int stride, const uint32_t *refs, int prot, uint32_t notify_offset,
                     uint32_t notify_port, uint32_t *id)
{
    struct {
        struct hyp_map_req r;
        struct hyp_map_ref refs[HYP_MAP_MAX_REFS];
    } req;
    struct {
        struct hyp_map_reply r;
        struct hyp_map_page pages[HYP_MAP_MAX_REFS];
    } rep;
    int fds[HYP_MAP_MAX_REFS];
    unsigned nfds = HYP_MAP_MAX_REFS;
    size_t len;
    req.r.count = n;
    req.r.flags = (prot & PROT_WRITE) ? HYP_MAP_WRITE : 0;
    req.r.notify_offset = notify_offset;
    req.r.notify_port = notify_port;
    for (uint32_t i = 0; i < n; i++) {
        req.refs[i].domid = domids[stride ? i : 0];
        req.refs[i].ref = refs[i];
    }
    if (xsim_client_call(&h->c, HYP_GNT_MAP, &req, sizeof(req.r) + n * sizeof(req.refs[0]), NULL, 0,
                         &rep, sizeof(rep), &len, fds, &nfds) < 0)
        return -1;
    int rc = 0, e = EPROTO;
    if (len != sizeof(rep.r) + n * sizeof(rep.pages[0]) || rep.r.count != n) {
        rc = -1;
    } else {
        for (uint32_t i = 0; i < n; i++) {
            if (rep.pages[i].fd >= nfds || rep.pages[i].page >= HYP_NR_GRANTS)
                rc = -1;
        }
    }
    /* One mmap per run of consecutive pages of one object. */
    for (uint32_t i = 0; rc == 0 && i < n;) {
        uint32_t j = i + 1;
        while (j < n && rep.pages[j].fd == rep.pages[i].fd &&
               rep.pages[j].page == rep.pages[i].page + (j - i))
            j++;
        void *p = mmap(base + (size_t)i * HYP_PAGE_SIZE, (size_t)(j - i) * HYP_PAGE_SIZE, prot,
                       MAP_SHARED | MAP_FIXED, fds[rep.pages[i].fd],
                       (off_t)rep.pages[i].page * HYP_PAGE_SIZE);
        if (p == MAP_FAILED) {
            e = errno;
            rc = -1;
        }
        i = j;
    }
    for (unsigned i = 0; i < nfds; i++)
        close(fds[i]);
    if (rc < 0) {
        unmap_ids(h, &rep.r.map_id, 1);
        errno = e;
        return -1;
    }
    *id = rep.r.map_id;
    return 0;
}

static void *map_refs(struct xengntdev_handle *h, uint32_t count, const uint32_t *domids,
                      int stride, const uint32_t *refs, int prot, uint32_t notify_offset,
                      uint32_t notify_port)
{
    if (!is_kind(h, HYP_KIND_GNTTAB))
        return NULL;
    if (!count || count > HYP_MAX_GRANTS_LIMIT || !domids || !refs) {
        errno = EINVAL; /* gntdev: "!count || count > limit" */
        xsim_client_log(h->c.logger, "gnttab", errno, "ioctl MAP_GRANT_REF failed");
        return NULL;
    }
    size_t size = (size_t)count * HYP_PAGE_SIZE;
    uint32_t nchunks = (count + HYP_MAP_MAX_REFS - 1) / HYP_MAP_MAX_REFS;
    struct region *r = calloc(1, sizeof(*r));
    uint32_t *ids = calloc(nchunks, sizeof(uint32_t));
    /* Reserve the whole range, then place each chunk in it: one contiguous mapping. */
    uint8_t *base = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!r || !ids || base == MAP_FAILED) {
        int e = errno;
        if (base != MAP_FAILED)
            munmap(base, size);
        free(ids);
        free(r);
        errno = e;
        xsim_client_log(h->c.logger, "gnttab", errno, "mmap failed");
        return NULL;
    }
    uint32_t nids = 0;
    for (uint32_t start = 0; start < count; start += HYP_MAP_MAX_REFS) {
        uint32_t n = count - start < HYP_MAP_MAX_REFS ? count - start : HYP_MAP_MAX_REFS;
        uint32_t noff = HYP_NONE;
        if ((uint64_t)notify_offset < (uint64_t)count * HYP_PAGE_SIZE &&
            notify_offset / HYP_PAGE_SIZE >= start && notify_offset / HYP_PAGE_SIZE < start + n)
            noff = notify_offset - start * HYP_PAGE_SIZE;
        if (map_chunk(h, base + (size_t)start * HYP_PAGE_SIZE, n, domids + (stride ? start : 0),
                      stride, refs + start, prot, noff, start ? HYP_NONE : notify_port,
                      &ids[nids]) < 0) {
            int e = errno;
            xsim_client_log(h->c.logger, "gnttab", e, "mmap of %u grant(s) failed", count);
            unmap_ids(h, ids, nids);
            munmap(base, size);
            free(ids);
            free(r);
            errno = e;
            return NULL;
        }
        nids++;
    }
    madvise(base, size, MADV_DONTFORK); /* as gntdev's VM_DONTCOPY */
    r->addr = base;
    r->count = count;
    r->ids = ids;
    r->nids = nids;
    region_add(h, r);
    return base;
}

XSIM_EXPORT void *xengnttab_map_grant_ref(xengnttab_handle *xgt, uint32_t domid, uint32_t ref,
                                          int prot)
{
    return map_refs(xgt, 1, &domid, 0, &ref, prot, HYP_NONE, HYP_NONE);
}

XSIM_EXPORT void *xengnttab_map_grant_refs(xengnttab_handle *xgt, uint32_t count, uint32_t *domids,
                                           uint32_t *refs, int prot)
{
    return map_refs(xgt, count, domids, 1, refs, prot, HYP_NONE, HYP_NONE);
}

XSIM_EXPORT void *xengnttab_map_domain_grant_refs(xengnttab_handle *xgt, uint32_t count,
                                                  uint32_t domid, uint32_t *refs, int prot)
{
    return map_refs(xgt, count, &domid, 0, refs, prot, HYP_NONE, HYP_NONE);
}

XSIM_EXPORT void *xengnttab_map_grant_ref_notify(xengnttab_handle *xgt, uint32_t domid,
                                                 uint32_t ref, int prot, uint32_t notify_offset,
                                                 evtchn_port_t notify_port)
{
    return map_refs(xgt, 1, &domid, 0, &ref, prot, notify_offset, notify_port);
}

XSIM_EXPORT int xengnttab_unmap(xengnttab_handle *xgt, void *start_address, uint32_t count)
{
    if (!is_kind(xgt, HYP_KIND_GNTTAB))
        return -1;
    /* gntdev: the address must start a mapping and count must be its size. */
    struct region *r = start_address ? region_take(xgt, start_address, count) : NULL;
    if (!r) {
        errno = EINVAL;
        return -1;
    }
    munmap(r->addr, (size_t)r->count * HYP_PAGE_SIZE);
    int rc = 0, e = 0;
    for (uint32_t i = 0; i < r->nids; i++) {
        struct hyp_u32 req = {r->ids[i]};
        if (xsim_client_call(&xgt->c, HYP_GNT_UNMAP, &req, sizeof(req), NULL, 0, NULL, 0, NULL,
                             NULL, NULL) < 0) {
            rc = -1;
            e = errno;
        }
    }
    free(r->ids);
    free(r);
    if (rc < 0)
        errno = e;
    return rc;
}

XSIM_EXPORT int xengnttab_set_max_grants(xengnttab_handle *xgt, uint32_t nr_grants)
{
    if (!is_kind(xgt, HYP_KIND_GNTTAB))
        return -1;
    struct hyp_u32 req = {nr_grants};
    return xsim_client_call(&xgt->c, HYP_GNT_SET_MAX, &req, sizeof(req), NULL, 0, NULL, 0, NULL,
                            NULL, NULL);
}

/* ---- grant copy: validated against the granting domain's published table --- */

static bool read_entry(const struct hyp_gtab_entry *e, struct hyp_gtab_entry *out)
{
    for (int tries = 0; tries < 10000; tries++) {
        uint32_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1)
            continue;
        out->domid = __atomic_load_n(&e->domid, __ATOMIC_RELAXED);
        out->flags = __atomic_load_n(&e->flags, __ATOMIC_RELAXED);
        out->obj = __atomic_load_n(&e->obj, __ATOMIC_RELAXED);
        out->page = __atomic_load_n(&e->page, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the fields /before/ the count again */
        if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) == s1)
            return true;
    }
    return false;
}

static const struct copy_tab *get_tab(struct xengntdev_handle *h, uint32_t domid, int16_t *st)
{
    struct copy_tab *t = &h->tabs[domid % COPY_TAB_SLOTS];
    if (t->e && t->domid == domid) {
        const struct hyp_gtab_hdr *hd = (const struct hyp_gtab_hdr *)t->e;
        if (!__atomic_load_n(&hd->dead, __ATOMIC_ACQUIRE))
            return t;
    }
    drop_tab(t);
    struct hyp_u32 req = {domid}, rep;
    int fd;
    unsigned nfds = 1;
    size_t len;
    if (xsim_client_call(&h->c, HYP_GNT_GTAB, &req, sizeof(req), NULL, 0, &rep, sizeof(rep), &len,
                         &fd, &nfds) < 0) {
        *st = errno == ESRCH ? GNTST_bad_domain : GNTST_general_error;
        return NULL;
    }
    *st = GNTST_general_error;
    if (nfds != 1)
        return NULL;
    void *p = MAP_FAILED;
    if (len == sizeof(rep) && rep.v > HYP_FIRST_GRANT && rep.v <= HYP_NR_GRANTS)
        p = mmap(NULL, (size_t)rep.v * sizeof(*t->e), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    const struct hyp_gtab_hdr *hd = p;
    if (hd->magic != HYP_GTAB_MAGIC || hd->domid != domid ||
        __atomic_load_n(&hd->dead, __ATOMIC_ACQUIRE)) {
        munmap(p, (size_t)rep.v * sizeof(*t->e));
        *st = GNTST_bad_domain;
        return NULL;
    }
    madvise(p, (size_t)rep.v * sizeof(*t->e), MADV_DONTFORK);
    t->e = p;
    t->domid = domid;
    t->nr = rep.v;
    return t;
}

static const struct copy_obj *fetch_obj(struct xengntdev_handle *h, uint32_t domid, uint32_t ref,
                                        bool write, uint32_t *page, int16_t *st)
{
    struct hyp_obj_req req = {.domid = domid, .ref = ref, .write = write};
    struct hyp_obj_reply rep;
    int fd;
    unsigned nfds = 1;
    size_t len;
    if (xsim_client_call(&h->c, HYP_GNT_OBJ, &req, sizeof(req), NULL, 0, &rep, sizeof(rep), &len,
                         &fd, &nfds) < 0) {
        *st = errno == ESRCH    ? GNTST_bad_domain
              : errno == ERANGE ? GNTST_bad_gntref
                                : GNTST_general_error;
        return NULL;
    }
    *st = GNTST_general_error;
    if (nfds != 1)
        return NULL;
    void *p = MAP_FAILED;
    if (len == sizeof(rep) && rep.npages && rep.npages <= HYP_NR_GRANTS && rep.page < rep.npages)
        p = mmap(NULL, (size_t)rep.npages * HYP_PAGE_SIZE,
                 rep.writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, (size_t)rep.npages * HYP_PAGE_SIZE, MADV_DONTFORK);
    struct copy_obj *o = &h->objs[rep.obj % COPY_OBJ_SLOTS];
    drop_obj(o);
    o->id = rep.obj;
    o->base = p;
    o->npages = rep.npages;
    o->writable = rep.writable;
    *page = rep.page;
    *st = GNTST_okay;
    return o;
}

/* The page behind (domid, ref) for this domain to read or write, or NULL with a
 * GNTST_* status as Xen's grant copy would give it. */
static uint8_t *resolve(struct xengntdev_handle *h, uint32_t domid, uint32_t ref, bool write,
                        int16_t *st)
{
    if (domid == DOMID_SELF)
        domid = h->c.domid;
    const struct copy_tab *t = get_tab(h, domid, st);
    if (!t)
        return NULL;
    if (ref >= t->nr) {
        *st = GNTST_bad_gntref;
        return NULL;
    }
    struct hyp_gtab_entry e;
    *st = GNTST_general_error;
    if (ref < HYP_FIRST_GRANT || !read_entry(&t->e[ref], &e))
        return NULL;
    if (!(e.flags & HYP_GTE_VALID) || e.domid != h->c.domid ||
        (write && !(e.flags & HYP_GTE_WRITABLE)))
        return NULL;
    uint32_t page = e.page;
    const struct copy_obj *o = &h->objs[e.obj % COPY_OBJ_SLOTS];
    if (!o->base || o->id != e.obj) {
        o = fetch_obj(h, domid, ref, write, &page, st);
        if (!o)
            return NULL;
    }
    if (page >= o->npages || (write && !o->writable)) {
        *st = GNTST_general_error;
        return NULL;
    }
    *st = GNTST_okay;
    return o->base + (size_t)page * HYP_PAGE_SIZE;
}

XSIM_EXPORT int xengnttab_grant_copy(xengnttab_handle *xgt, uint32_t count,
                                     xengnttab_grant_copy_segment_t *segs)
{
    if (!is_kind(xgt, HYP_KIND_GNTTAB))
        return -1;
    if (count && !segs) {
        errno = EFAULT;
        return -1;
    }
    /* gntdev refuses the whole call for these, before any copying. */
    for (uint32_t i = 0; i < count; i++) {
        const xengnttab_grant_copy_segment_t *s = &segs[i];
        if (!(s->flags & (GNTCOPY_source_gref | GNTCOPY_dest_gref))) {
            errno = EINVAL; /* local to local */
            return -1;
        }
        if (((s->flags & GNTCOPY_source_gref) &&
             s->source.foreign.offset + s->len > HYP_PAGE_SIZE) ||
            ((s->flags & GNTCOPY_dest_gref) && s->dest.foreign.offset + s->len > HYP_PAGE_SIZE)) {
            errno = EINVAL; /* "Can't cross page if source/dest is a grant ref." */
            return -1;
        }
        if (s->len && ((!(s->flags & GNTCOPY_source_gref) && !s->source.virt) ||
                       (!(s->flags & GNTCOPY_dest_gref) && !s->dest.virt))) {
            errno = EFAULT;
            return -1;
        }
    }
    pthread_mutex_lock(&xgt->lock);
    for (uint32_t i = 0; i < count; i++) {
        xengnttab_grant_copy_segment_t *s = &segs[i];
        int16_t st = GNTST_okay;
        const uint8_t *src = s->source.virt;
        uint8_t *dst = s->dest.virt;
        if (s->flags & GNTCOPY_source_gref) {
            src = resolve(xgt, s->source.foreign.domid, s->source.foreign.ref, false, &st);
            if (src)
                src += s->source.foreign.offset;
        }
        if (st == GNTST_okay && (s->flags & GNTCOPY_dest_gref)) {
            dst = resolve(xgt, s->dest.foreign.domid, s->dest.foreign.ref, true, &st);
            if (dst)
                dst += s->dest.foreign.offset;
        }
        if (st == GNTST_okay && s->len)
            memmove(dst, src, s->len);
        s->status = st;
    }
    pthread_mutex_unlock(&xgt->lock);
    return 0;
}

XSIM_EXPORT int xengnttab_dmabuf_exp_from_refs(xengnttab_handle *xgt, uint32_t domid,
                                               uint32_t flags, uint32_t count, const uint32_t *refs,
                                               uint32_t *fd)
{
    (void)xgt, (void)domid, (void)flags, (void)count, (void)refs, (void)fd;
    errno = EOPNOTSUPP;
    return -1;
}

XSIM_EXPORT int xengnttab_dmabuf_exp_wait_released(xengnttab_handle *xgt, uint32_t fd,
                                                   uint32_t wait_to_ms)
{
    (void)xgt, (void)fd, (void)wait_to_ms;
    errno = EOPNOTSUPP;
    return -1;
}

XSIM_EXPORT int xengnttab_dmabuf_imp_to_refs(xengnttab_handle *xgt, uint32_t domid, uint32_t fd,
                                             uint32_t count, uint32_t *refs)
{
    (void)xgt, (void)domid, (void)fd, (void)count, (void)refs;
    errno = EOPNOTSUPP;
    return -1;
}

XSIM_EXPORT int xengnttab_dmabuf_imp_release(xengnttab_handle *xgt, uint32_t fd)
{
    (void)xgt, (void)fd;
    errno = EOPNOTSUPP;
    return -1;
}

/* ---- xengntshr ---------------------------------------------------------------- */

XSIM_EXPORT xengntshr_handle *xengntshr_open(struct xentoollog_logger *logger, unsigned open_flags)
{
    (void)open_flags;
    return handle_open(HYP_KIND_GNTSHR, logger, "gntshr");
}

XSIM_EXPORT int xengntshr_close(xengntshr_handle *xgs)
{
    return handle_close(xgs);
}

XSIM_EXPORT int xengntshr_fd(xengntshr_handle *xgs)
{
    if (!xgs) {
        errno = EINVAL;
        return -1;
    }
    return xgs->c.sock;
}

static void *share(struct xengntdev_handle *h, uint32_t domid, int count, uint32_t *refs,
                   int writable, uint32_t notify_offset, uint32_t notify_port)
{
    if (!is_kind(h, HYP_KIND_GNTSHR))
        return NULL;
    if (count <= 0 || !refs) {
        errno = EINVAL;
        xsim_client_log(h->c.logger, "gntshr", errno, "ioctl failed");
        return NULL;
    }
    if ((uint32_t)count > HYP_NR_GRANTS - HYP_FIRST_GRANT) {
        errno = ENOSPC;
        xsim_client_log(h->c.logger, "gntshr", errno, "ioctl failed");
        return NULL;
    }
    size_t size = (size_t)count * HYP_PAGE_SIZE;
    size_t replen = sizeof(uint32_t) * (1 + (size_t)count);
    uint32_t *rep = malloc(replen);
    struct region *r = calloc(1, sizeof(*r));
    uint32_t *ids = calloc(1, sizeof(uint32_t));
    uint8_t *addr = MAP_FAILED;
    int fd = -1, e;
    if (!rep || !r || !ids)
        goto fail;
    /* The pages (zeroed, as gntalloc's), sealed so no mapper can be made to fault. */
    fd = memfd_create("xensim-gntshr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, (off_t)size) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
        goto fail;
    addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED)
        goto fail;
    struct hyp_share_req req = {.domid = domid,
                                .count = (uint32_t)count,
                                .writable = writable != 0,
                                .notify_offset = notify_offset,
                                .notify_port = notify_port};
    size_t len;
    if (xsim_client_call(&h->c, HYP_SHR_SHARE, &req, sizeof(req), &fd, 1, rep, replen, &len, NULL,
                         NULL) < 0)
        goto fail;
    bool ok = len == replen;
    for (int i = 0; ok && i < count; i++)
        ok = rep[1 + i] >= HYP_FIRST_GRANT && rep[1 + i] < HYP_NR_GRANTS;
    if (!ok) {
        struct hyp_u32 un = {rep[0]};
        xsim_client_call(&h->c, HYP_SHR_UNSHARE, &un, sizeof(un), NULL, 0, NULL, 0, NULL, NULL,
                         NULL);
        errno = EPROTO;
        goto fail;
    }
    close(fd);
    memcpy(refs, rep + 1, sizeof(uint32_t) * (size_t)count);
    ids[0] = rep[0];
    r->addr = addr;
    r->count = (uint32_t)count;
    r->ids = ids;
    r->nids = 1;
    region_add(h, r);
    free(rep);
    return addr;
fail:
    e = errno;
    xsim_client_log(h->c.logger, "gntshr", e, "sharing %d page(s) with dom%u failed", count, domid);
    if (addr != MAP_FAILED)
        munmap(addr, size);
    if (fd >= 0)
        close(fd);
    free(ids);
    free(r);
    free(rep);
    errno = e;
    return NULL;
}

XSIM_EXPORT void *xengntshr_share_pages(xengntshr_handle *xgs, uint32_t domid, int count,
                                        uint32_t *refs, int writable)
{
    return share(xgs, domid, count, refs, writable, HYP_NONE, HYP_NONE);
}

XSIM_EXPORT void *xengntshr_share_page_notify(xengntshr_handle *xgs, uint32_t domid, uint32_t *ref,
                                              int writable, uint32_t notify_offset,
                                              evtchn_port_t notify_port)
{
    return share(xgs, domid, 1, ref, writable, notify_offset, notify_port);
}

XSIM_EXPORT int xengntshr_unshare(xengntshr_handle *xgs, void *start_address, uint32_t count)
{
    if (!is_kind(xgs, HYP_KIND_GNTSHR))
        return -1;
    struct region *r = start_address ? region_take(xgs, start_address, count) : NULL;
    if (!r) {
        errno = EINVAL;
        return -1;
    }
    munmap(r->addr, (size_t)r->count * HYP_PAGE_SIZE);
    struct hyp_u32 req = {r->ids[0]};
    int rc = xsim_client_call(&xgs->c, HYP_SHR_UNSHARE, &req, sizeof(req), NULL, 0, NULL, 0, NULL,
                              NULL, NULL);
    int e = errno;
    free(r->ids);
    free(r);
    errno = e;
    return rc;
}
