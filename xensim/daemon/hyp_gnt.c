/* hyp_gnt.c - grant tables: what Xen's grant table plus Linux's gntalloc
 * (xengntshr) and gntdev (xengnttab) do, for memfd-backed pages.
 *
 * A share is an object: one memfd of npages pages registered by a sharing
 * handle, given one grant ref per page in the granting domain's table, all
 * to one grantee with one permission. Refs are allocated cyclically, so a
 * ref just freed is not handed out again at once. A mapping handle gets the
 * object's fd (read-only for read-only grants or mappings) and holds a
 * reference on the object, so pages stay valid for it after the share ends
 * (as a mapped grant outlives its revocation in Xen).
 *
 * The table each domain publishes (hyp_proto.h) lets a library validate
 * grant copies without a round trip; the daemon is its only writer.
 */
#define _GNU_SOURCE
#include "hyp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xen/grant_table.h>

struct hyp_obj {
    uint32_t id;
    int fd;    /* read-write memfd */
    int ro_fd; /* read-only reopening, made on first need */
    uint32_t npages;
    bool writable;
    bool shared; /* its refs are granted */
    uint16_t grantee;
    unsigned owner;         /* granting domid */
    uint32_t *refs;         /* npages refs while shared */
    unsigned long users;    /* 1 while shared, plus one per mapped page */
    uint32_t notify_offset; /* byte in the object, or HYP_NONE */
    uint32_t notify_port;   /* port of owner, or HYP_NONE */
    struct hyp_conn *conn;  /* the sharing handle while shared */
    struct hyp_obj *prev, *next;
    uint64_t mark; /* scratch for de-duplicating fds in one reply */
    unsigned mark_idx;
};

struct hyp_map {
    uint32_t id;
    uint32_t count;
    struct hyp_obj **objs; /* count entries, one reference each */
    struct hyp_obj *nobj;  /* unmap-notify: clear this byte of nobj */
    uint64_t nbyte;
    uint32_t nport; /* ... and notify this local port (or HYP_NONE) */
    struct hyp_map *prev, *next;
};

static unsigned gntalloc_limit = 1024;
static uint32_t next_obj_id = 1;
static uint64_t mark_stamp;

void hyp_gnt_set_limit(unsigned limit)
{
    gntalloc_limit = limit;
}

/* --- the published table ------------------------------------------------ */

static void gtab_write(struct hyp_dom *d, uint32_t ref, uint16_t domid, uint16_t flags,
                       uint32_t obj, uint32_t page)
{
    struct hyp_gtab_entry *e = &d->gtab[ref];
    uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, s + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE); /* odd count /before/ the fields change */
    __atomic_store_n(&e->domid, domid, __ATOMIC_RELAXED);
    __atomic_store_n(&e->flags, flags, __ATOMIC_RELAXED);
    __atomic_store_n(&e->obj, obj, __ATOMIC_RELAXED);
    __atomic_store_n(&e->page, page, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE); /* fields /then/ even count */
}

static int reopen_ro(int fd)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    return open(path, O_RDONLY | O_CLOEXEC);
}

int hyp_gnt_dom_init(struct hyp_dom *d)
{
    char name[32];
    snprintf(name, sizeof(name), "xensim-gtab-%u", d->domid);
    size_t size = (size_t)HYP_NR_GRANTS * sizeof(struct hyp_gtab_entry);
    d->gtab_fd = memfd_create(name, MFD_CLOEXEC);
    if (d->gtab_fd < 0)
        return -1;
    if (ftruncate(d->gtab_fd, (off_t)size) < 0)
        goto fail;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, d->gtab_fd, 0);
    if (p == MAP_FAILED)
        goto fail;
    d->gtab = p;
    struct hyp_gtab_hdr *hdr = p;
    hdr->magic = HYP_GTAB_MAGIC;
    hdr->domid = d->domid;
    hdr->nr = HYP_NR_GRANTS;
    d->gtab_ro_fd = reopen_ro(d->gtab_fd);
    if (d->gtab_ro_fd < 0)
        goto fail;
    d->next_ref = HYP_FIRST_GRANT;
    return 0;
fail : {
    int e = errno;
    hyp_gnt_dom_fini(d);
    errno = e;
    return -1;
}
}

/* --- objects -------------------------------------------------------------- */

static void obj_put(struct hyp_obj *o)
{
    if (--o->users)
        return;
    if (o->fd >= 0)
        close(o->fd);
    if (o->ro_fd >= 0)
        close(o->ro_fd);
    free(o->refs);
    free(o);
}

static int obj_fd(struct hyp_obj *o, bool write)
{
    if (write)
        return o->fd;
    if (o->ro_fd < 0)
        o->ro_fd = reopen_ro(o->fd);
    return o->ro_fd;
}

/* Revoke the grants of o, notify if asked, and drop the share's reference. */
static void end_share(struct hyp_obj *o, bool notify)
{
    struct hyp_dom *d = hyp_dom_find(o->owner);
    if (d && d->grefs) {
        for (uint32_t i = 0; i < o->npages; i++) {
            uint32_t r = o->refs[i];
            d->grefs[r].obj = NULL;
            gtab_write(d, r, 0, 0, 0, 0);
        }
        d->nr_shared -= o->npages;
    }
    if (notify && o->notify_offset != HYP_NONE) {
        static const char zero;
        if (pwrite(o->fd, &zero, 1, o->notify_offset) != 1)
            hyp_log("dom%u: unmap-notify clear byte: %s", o->owner, strerror(errno));
    }
    if (o->notify_port != HYP_NONE && d)
        hyp_evt_notify_put(d, o->notify_port, notify);
    o->notify_port = HYP_NONE;
    struct hyp_conn *c = o->conn;
    if (c) {
        if (o->prev)
            o->prev->next = o->next;
        else
            c->objs = o->next;
        if (o->next)
            o->next->prev = o->prev;
    }
    o->conn = NULL;
    o->prev = o->next = NULL;
    o->shared = false;
    obj_put(o);
}

/* The grant (granter, ref) as domain req would use it; NULL with a GNTST_* code. */
static struct hyp_gref *grant_lookup(uint32_t granter, uint32_t ref, unsigned req, bool write,
                                     int *gst)
{
    struct hyp_dom *d = granter < 0x10000 ? hyp_dom_find(granter) : NULL;
    if (!d) {
        *gst = GNTST_bad_domain;
        return NULL;
    }
    if (ref >= HYP_NR_GRANTS) {
        *gst = GNTST_bad_gntref;
        return NULL;
    }
    struct hyp_gref *g = d->grefs ? &d->grefs[ref] : NULL;
    /* Xen: "Bad flags or dom" and "Attempt to write-pin a r/o grant entry". */
    if (!g || !g->obj || g->obj->grantee != req || (write && !g->obj->writable)) {
        *gst = GNTST_general_error;
        return NULL;
    }
    *gst = GNTST_okay;
    return g;
}

/* --- xengntshr -------------------------------------------------------------- */

static int alloc_refs(struct hyp_dom *d, uint32_t count, uint32_t *out)
{
    if (!d->grefs) {
        d->grefs = calloc(HYP_NR_GRANTS, sizeof(*d->grefs));
        if (!d->grefs)
            return ENOMEM;
    }
    uint32_t found = 0, r = d->next_ref;
    for (uint32_t n = 0; n < HYP_NR_GRANTS - HYP_FIRST_GRANT && found < count; n++) {
        if (!d->grefs[r].obj)
            out[found++] = r;
        if (++r >= HYP_NR_GRANTS)
            r = HYP_FIRST_GRANT;
    }
    if (found < count)
        return ENOSPC; /* Linux: no free grant entries and the table cannot grow */
    d->next_ref = r;
    return 0;
}

static int check_memfd(int fd, uint32_t count)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        (uint64_t)st.st_size < (uint64_t)count * HYP_PAGE_SIZE)
        return EINVAL;
    /* Sealed against shrinking, so no mapper can be made to fault. */
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_SEAL)) != (F_SEAL_SHRINK | F_SEAL_SEAL))
        return EINVAL;
    return 0;
}

static void do_share(struct hyp_conn *c, const struct xsim_hdr *h, const void *body, int *fds,
                     unsigned nfds)
{
    struct hyp_dom *d = c->dom;
    struct hyp_share_req req;
    if (h->len != sizeof(req) || nfds != 1) {
        hyp_close_fds(fds, nfds);
        hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        return;
    }
    memcpy(&req, body, sizeof(req));
    int err = 0;
    struct hyp_obj *o = NULL;
    uint32_t *rep = NULL;
    if (req.count == 0 || req.count > HYP_NR_GRANTS - HYP_FIRST_GRANT || req.domid > 0xFFFF) {
        err = EINVAL;
        goto out;
    }
    if ((err = check_memfd(fds[0], req.count)))
        goto out;
    if (d->dying) {
        err = EINVAL;
        goto out;
    }
    /* gntalloc: "gref_size + op.count > limit" is ENOSPC. */
    if ((uint64_t)d->nr_shared + req.count > gntalloc_limit) {
        err = ENOSPC;
        goto out;
    }
    o = calloc(1, sizeof(*o));
    rep = calloc(1 + (size_t)req.count, sizeof(uint32_t));
    if (!o || !rep) {
        err = ENOMEM;
        goto out;
    }
    o->refs = calloc(req.count, sizeof(uint32_t));
    if (!o->refs) {
        err = ENOMEM;
        goto out;
    }
    o->fd = fds[0];
    o->ro_fd = -1;
    o->npages = req.count;
    o->writable = req.writable != 0;
    o->grantee = (uint16_t)req.domid;
    o->owner = d->domid;
    o->notify_offset = HYP_NONE;
    o->notify_port = HYP_NONE;
    if ((err = alloc_refs(d, req.count, o->refs)))
        goto out;
    if (req.notify_port != HYP_NONE) {
        if (hyp_evt_notify_get(d, req.notify_port) < 0) {
            err = EINVAL; /* gntalloc: evtchn_get failed */
            goto out;
        }
        o->notify_port = req.notify_port;
    }
    if ((uint64_t)req.notify_offset < (uint64_t)req.count * HYP_PAGE_SIZE)
        o->notify_offset = req.notify_offset;

    fds[0] = -1; /* the object owns it now */
    o->id = next_obj_id++;
    if (!next_obj_id)
        next_obj_id = 1;
    o->shared = true;
    o->users = 1;
    o->conn = c;
    o->next = c->objs;
    if (c->objs)
        c->objs->prev = o;
    c->objs = o;
    uint16_t fl = HYP_GTE_VALID | (o->writable ? HYP_GTE_WRITABLE : 0);
    for (uint32_t i = 0; i < o->npages; i++) {
        d->grefs[o->refs[i]].obj = o;
        d->grefs[o->refs[i]].page = i;
        gtab_write(d, o->refs[i], o->grantee, fl, o->id, i);
    }
    d->nr_shared += o->npages;
    rep[0] = o->id;
    memcpy(rep + 1, o->refs, req.count * sizeof(uint32_t));
    hyp_reply(c, h, 0, rep, (1 + (size_t)req.count) * sizeof(uint32_t), NULL, 0);
    free(rep);
    return;
out:
    if (o) {
        free(o->refs);
        free(o);
    }
    free(rep);
    hyp_close_fds(fds, nfds);
    hyp_reply(c, h, err, NULL, 0, NULL, 0);
}

static void do_unshare(struct hyp_conn *c, const struct xsim_hdr *h, const void *body)
{
    struct hyp_u32 req;
    if (h->len != sizeof(req)) {
        hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        return;
    }
    memcpy(&req, body, sizeof(req));
    struct hyp_obj *o = c->objs;
    while (o && o->id != req.v)
        o = o->next;
    if (!o) {
        hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        return;
    }
    end_share(o, hyp_dom_live(c->dom));
    hyp_reply(c, h, 0, NULL, 0, NULL, 0);
}

/* --- xengnttab ---------------------------------------------------------------- */

static void map_release(struct hyp_conn *c, struct hyp_map *m, bool notify)
{
    if (notify && m->nobj) {
        static const char zero;
        if (pwrite(m->nobj->fd, &zero, 1, (off_t)m->nbyte) != 1)
            hyp_log("dom%u: unmap-notify clear byte: %s", c->dom->domid, strerror(errno));
    }
    if (m->nport != HYP_NONE)
        hyp_evt_notify_put(c->dom, m->nport, notify);
    for (uint32_t i = 0; i < m->count; i++)
        obj_put(m->objs[i]);
    c->mapped -= m->count;
    if (m->prev)
        m->prev->next = m->next;
    else
        c->maps = m->next;
    if (m->next)
        m->next->prev = m->prev;
    free(m->objs);
    free(m);
}

static void do_map(struct hyp_conn *c, const struct xsim_hdr *h, const void *body)
{
    struct hyp_map_req req;
    if (h->len < sizeof(req)) {
        hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (req.count == 0 || req.count > HYP_MAP_MAX_REFS ||
        h->len != sizeof(req) + (size_t)req.count * sizeof(struct hyp_map_ref)) {
        hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        return;
    }
    const unsigned char *p = (const unsigned char *)body + sizeof(req);
    bool write = req.flags & HYP_MAP_WRITE;
    struct hyp_dom *d = c->dom;
    int err = 0;
    bool port_held = false;
    struct hyp_map *m = NULL;
    struct {
        struct hyp_map_reply r;
        struct hyp_map_page pages[HYP_MAP_MAX_REFS];
    } rep;
    int fds[HYP_MAP_MAX_REFS];
    unsigned nfds = 0;

    if (c->mapped + req.count > c->max_grants) {
        err = ENOMEM; /* gntdev: "can't map: over limit" */
        goto fail;
    }
    m = calloc(1, sizeof(*m));
    if (!m || !(m->objs = calloc(req.count, sizeof(*m->objs)))) {
        err = ENOMEM;
        goto fail;
    }
    m->nport = HYP_NONE;
    uint64_t stamp = ++mark_stamp;
    for (uint32_t i = 0; i < req.count; i++) {
        struct hyp_map_ref r;
        memcpy(&r, p + i * sizeof(r), sizeof(r));
        int gst;
        struct hyp_gref *g = grant_lookup(r.domid, r.ref, d->domid, write, &gst);
        if (!g) {
            err = EINVAL; /* gntdev: any failed map op fails the mmap with EINVAL */
            goto fail;
        }
        struct hyp_obj *o = g->obj;
        if (o->mark != stamp) {
            int fd = obj_fd(o, write);
            if (fd < 0) {
                err = errno;
                goto fail;
            }
            o->mark = stamp;
            o->mark_idx = nfds;
            fds[nfds++] = fd;
        }
        m->objs[i] = o;
        rep.pages[i].fd = o->mark_idx;
        rep.pages[i].page = g->page;
    }
    if ((uint64_t)req.notify_offset < (uint64_t)req.count * HYP_PAGE_SIZE) {
        if (!write) {
            err = EINVAL; /* gntdev: clear-byte notify on a read-only mapping */
            goto fail;
        }
        uint32_t pg = req.notify_offset / HYP_PAGE_SIZE;
        m->nobj = m->objs[pg];
        m->nbyte = (uint64_t)rep.pages[pg].page * HYP_PAGE_SIZE + req.notify_offset % HYP_PAGE_SIZE;
    }
    if (req.notify_port != HYP_NONE) {
        if (hyp_evt_notify_get(d, req.notify_port) < 0) {
            err = EINVAL; /* gntdev: evtchn_get failed */
            goto fail;
        }
        port_held = true;
        m->nport = req.notify_port;
    }

    for (uint32_t i = 0; i < req.count; i++)
        m->objs[i]->users++;
    m->count = req.count;
    m->id = c->next_map_id++;
    if (!c->next_map_id)
        c->next_map_id = 1;
    c->mapped += req.count;
    m->next = c->maps;
    if (c->maps)
        c->maps->prev = m;
    c->maps = m;
    rep.r.map_id = m->id;
    rep.r.count = req.count;
    hyp_reply(c, h, 0, &rep, sizeof(rep.r) + req.count * sizeof(rep.pages[0]), fds, nfds);
    return;
fail:
    if (port_held)
        hyp_evt_notify_put(d, req.notify_port, false);
    if (m)
        free(m->objs);
    free(m);
    hyp_reply(c, h, err, NULL, 0, NULL, 0);
}

static void do_unmap(struct hyp_conn *c, const struct xsim_hdr *h, const void *body)
{
    struct hyp_u32 req;
    if (h->len != sizeof(req)) {
        hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        return;
    }
    memcpy(&req, body, sizeof(req));
    struct hyp_map *m = c->maps;
    while (m && m->id != req.v)
        m = m->next;
    if (!m) {
        hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        return;
    }
    map_release(c, m, hyp_dom_live(c->dom));
    hyp_reply(c, h, 0, NULL, 0, NULL, 0);
}

static void do_set_max(struct hyp_conn *c, const struct xsim_hdr *h, const void *body)
{
    struct hyp_u32 req;
    if (h->len != sizeof(req)) {
        hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (req.v > HYP_MAX_GRANTS_LIMIT) {
        hyp_reply(c, h, E2BIG, NULL, 0, NULL, 0); /* gntdev: "op.count > limit" */
        return;
    }
    c->max_grants = req.v;
    hyp_reply(c, h, 0, NULL, 0, NULL, 0);
}

static void do_gtab(struct hyp_conn *c, const struct xsim_hdr *h, const void *body)
{
    struct hyp_u32 req;
    if (h->len != sizeof(req)) {
        hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        return;
    }
    memcpy(&req, body, sizeof(req));
    struct hyp_dom *d = req.v < 0x10000 ? hyp_dom_find(req.v) : NULL;
    if (!d || d->gtab_ro_fd < 0) {
        hyp_reply(c, h, ESRCH, NULL, 0, NULL, 0);
        return;
    }
    struct hyp_u32 rep = {HYP_NR_GRANTS};
    hyp_reply(c, h, 0, &rep, sizeof(rep), &d->gtab_ro_fd, 1);
}

static void do_obj(struct hyp_conn *c, const struct xsim_hdr *h, const void *body)
{
    struct hyp_obj_req req;
    if (h->len != sizeof(req)) {
        hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        return;
    }
    memcpy(&req, body, sizeof(req));
    int gst;
    struct hyp_gref *g = grant_lookup(req.domid, req.ref, c->dom->domid, req.write != 0, &gst);
    if (!g) {
        int err = gst == GNTST_bad_domain ? ESRCH : gst == GNTST_bad_gntref ? ERANGE : EPERM;
        hyp_reply(c, h, err, NULL, 0, NULL, 0);
        return;
    }
    struct hyp_obj *o = g->obj;
    int fd = obj_fd(o, o->writable);
    if (fd < 0) {
        hyp_reply(c, h, errno, NULL, 0, NULL, 0);
        return;
    }
    struct hyp_obj_reply rep = {
        .obj = o->id, .npages = o->npages, .writable = o->writable, .page = g->page};
    hyp_reply(c, h, 0, &rep, sizeof(rep), &fd, 1);
}

void hyp_gnt_dispatch(struct hyp_conn *c, const struct xsim_hdr *h, const void *body, int *fds,
                      unsigned nfds)
{
    if (c->kind == HYP_KIND_GNTSHR) {
        if (h->op == HYP_SHR_SHARE) {
            do_share(c, h, body, fds, nfds);
        } else if (h->op == HYP_SHR_UNSHARE && !nfds) {
            do_unshare(c, h, body);
        } else {
            hyp_close_fds(fds, nfds);
            c->dead = true; /* an unknown message is fatal */
        }
        return;
    }
    if (nfds) {
        hyp_close_fds(fds, nfds);
        c->dead = true; /* no xengnttab request carries fds */
        return;
    }
    switch (h->op) {
    case HYP_GNT_MAP:
        do_map(c, h, body);
        break;
    case HYP_GNT_UNMAP:
        do_unmap(c, h, body);
        break;
    case HYP_GNT_SET_MAX:
        do_set_max(c, h, body);
        break;
    case HYP_GNT_GTAB:
        do_gtab(c, h, body);
        break;
    case HYP_GNT_OBJ:
        do_obj(c, h, body);
        break;
    default:
        c->dead = true;
        break;
    }
}

void hyp_gnt_conn_close(struct hyp_conn *c, bool notify)
{
    while (c->maps)
        map_release(c, c->maps, notify);
    while (c->objs)
        end_share(c->objs, notify);
}

void hyp_gnt_dom_fini(struct hyp_dom *d)
{
    if (d->grefs) {
        for (uint32_t r = HYP_FIRST_GRANT; r < HYP_NR_GRANTS; r++) {
            struct hyp_obj *o = d->grefs[r].obj;
            if (o)
                end_share(o, false);
        }
        free(d->grefs);
        d->grefs = NULL;
    }
    if (d->gtab) {
        struct hyp_gtab_hdr *hdr = (struct hyp_gtab_hdr *)d->gtab;
        __atomic_store_n(&hdr->dead, 1, __ATOMIC_RELEASE);
        munmap(d->gtab, (size_t)HYP_NR_GRANTS * sizeof(struct hyp_gtab_entry));
        d->gtab = NULL;
    }
    if (d->gtab_ro_fd >= 0)
        close(d->gtab_ro_fd);
    if (d->gtab_fd >= 0)
        close(d->gtab_fd);
    d->gtab_ro_fd = d->gtab_fd = -1;
}
