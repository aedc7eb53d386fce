/* blk_class.c - the blkif class: entries to ring requests and back, over
 * the live transport; a hot standby's transport held beside it, idle, and
 * swapped in at a promotion. */
#define _GNU_SOURCE
#include "blk_class.h"

#include "blk_transport.h"
#include "blk_xen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_DATA_PAGES 16u /* a budget leaving fewer data pages is refused */
/* A held standby shares this many data pages ahead at most (one chunk):
 * the rest of its budget only once it is promoted, so that a disk with a
 * standby grants max-grants plus a ring and a chunk (README.md, "The disk's
 * hot standby": 216 + 4 + 32 = 252 at the defaults). */
#define STANDBY_PREFILL BLK_POOL_CHUNK

struct blk_class {
    struct blk_limits lim;
    uint16_t handle;
    xengntshr_handle *gs;
    struct sf_engine *eng;
    struct blk_transport live; /* the one requests go on */
    struct blk_transport sb;   /* a hot standby's: never a request until promoted */
    bool sb_connected;         /* sb checked against the disk at its backend's Connected */
    struct blk_pool retired;   /* a failed connection's pool, unshared a chunk a turn */
    /* A hot switch left the failed ring's keys in its dir, of this order:
     * removed by blk_forget (sf_conn.c, forget_now). */
    bool retired_keys;
    int retired_order;
    unsigned unpushed;
    /* the disk as first connected */
    struct blk_features first;
    bool have_first;
};

#define LOG(c, lvl, ...)                                                                           \
    do {                                                                                           \
        if ((c)->eng)                                                                              \
            sf_engine_log((c)->eng, lvl, __VA_ARGS__);                                             \
    } while (0)

static void blk_teardown(void *cls, struct sfx *x)
{
    struct blk_class *c = cls;
    /* A hot switch: the ring's keys (two round trips or more) wait until
     * the replay is on the standby's ring (blk_forget). */
    bool later = c->eng && sf_engine_switching(c->eng) && c->live.published;
    c->retired_keys = later;
    c->retired_order = (int)c->live.ring.order;
    blk_transport_retire(&c->live, later ? NULL : x, &c->retired);
    c->unpushed = 0;
}

static void blk_forget(void *cls, struct sfx *x)
{
    struct blk_class *c = cls;
    if (c->retired_keys)
        blk_remove_transport(x, c->retired_order);
    c->retired_keys = false;
}

/* After the turn's requests are on the ring: a chunk of the retired pool. */
static bool blk_background(void *cls)
{
    struct blk_class *c = cls;
    return c->retired.nchunks && blk_pool_release_step(&c->retired);
}

static int blk_setup(void *cls, struct sfx *x)
{
    struct blk_class *c = cls;
    char why[256];
    if (blk_transport_setup(&c->live, c->gs, &c->lim, x, 0, why, sizeof(why)) < 0) {
        LOG(c, SF_LOG_ERR, "%s", why);
        return -1;
    }
    LOG(c, SF_LOG_DEBUG, "shared a %u-page ring (%u requests) with domain %u, port %u",
        1u << c->live.ring.order, blk_ring_size(&c->live.ring), x->be_id, c->live.ring.port);
    return 0;
}

/* The disk a backend offers must be the one we had: its size and sector
 * size (a different disk is never written). */
static bool same_disk(struct blk_class *c, const struct blk_features *f, const char *be)
{
    if (f->sectors == c->first.sectors && f->sector_size == c->first.sector_size)
        return true;
    LOG(c, SF_LOG_ERR,
        "backend %s serves %" PRIu64 " sectors with sector-size %u; the disk had %" PRIu64
        " with %u",
        be, f->sectors, f->sector_size, c->first.sectors, c->first.sector_size);
    return false;
}

static void conn_info(const struct blk_transport *t, struct sf_conn_info *conn)
{
    conn->nslots = t->nslots;
    conn->write_cache = t->f.flush || t->f.barrier;
    conn->max_data = (uint64_t)t->segs_max * BLK_PAGE_SIZE;
}

static void log_disk(struct blk_class *c, const char *which, const struct blk_transport *t)
{
    const struct blk_features *f = &t->f;
    LOG(c, SF_LOG_DEBUG,
        "%sdisk %" PRIu64 " sectors, sector-size %u; %u segments per request%s; flush %d, "
        "barrier %d, discard %d, persistent %d",
        which, f->sectors, f->sector_size, t->segs_max, t->indirect ? " (indirect)" : "", f->flush,
        f->barrier, f->discard, f->persistent);
}

static int blk_connect(void *cls, struct sfx *x, bool first, struct sf_conn_info *conn)
{
    struct blk_class *c = cls;
    (void)first;
    char why[256];
    if (blk_transport_connect(&c->live, &c->lim, x, why, sizeof(why)) < 0) {
        LOG(c, SF_LOG_ERR, "%s", why);
        return -1;
    }
    if (!c->have_first) {
        c->first = c->live.f;
        c->have_first = true;
    } else if (!same_disk(c, &c->live.f, x->be)) {
        return SF_CONN_MISMATCH;
    }
    conn_info(&c->live, conn);
    log_disk(c, "", &c->live);
    return 0;
}

/* ---- the hot standby's transport ---- */

static void blk_standby_teardown(void *cls, struct sfx *sx)
{
    struct blk_class *c = cls;
    blk_transport_teardown(&c->sb, sx);
    c->sb_connected = false;
}

/* As setup, into the slot sx names, with the start of the live pool's
 * working set shared ahead (at most a chunk: the grant budget), so that the
 * first requests after a promotion wait for no sharing; the pool grows like
 * a live one once promoted. */
static int blk_standby_setup(void *cls, struct sfx *sx)
{
    struct blk_class *c = cls;
    char why[256];
    unsigned prefill = c->live.pool_up ? c->live.pool.npages : 0;
    if (prefill > STANDBY_PREFILL)
        prefill = STANDBY_PREFILL;
    c->sb_connected = false;
    if (blk_transport_setup(&c->sb, c->gs, &c->lim, sx, prefill, why, sizeof(why)) < 0) {
        LOG(c, SF_LOG_ERR, "standby: %s", why);
        return -1;
    }
    LOG(c, SF_LOG_DEBUG,
        "standby: shared a %u-page ring (%u requests) and %u data pages with domain %u, port %u "
        "(the live connection: a %u-page ring and %u of its %u data pages)",
        1u << c->sb.ring.order, blk_ring_size(&c->sb.ring), c->sb.pool.npages, sx->be_id,
        c->sb.ring.port, c->live.ring_up ? 1u << c->live.ring.order : 0, c->live.pool.npages,
        c->live.pool.max_pages);
    return 0;
}

/* Checked as connect checks a new backend, kept for the promotion; nothing
 * is issued on it. Before the first connection there is no disk to check
 * it against: later. */
static int blk_standby_connect(void *cls, struct sfx *sx, struct sf_conn_info *conn)
{
    struct blk_class *c = cls;
    char why[256];
    if (!c->have_first) {
        LOG(c, SF_LOG_INFO, "standby backend %s: the disk is not connected yet; later", sx->be);
        return -1;
    }
    if (blk_transport_connect(&c->sb, &c->lim, sx, why, sizeof(why)) < 0) {
        LOG(c, SF_LOG_ERR, "standby: %s", why);
        return -1;
    }
    if (!same_disk(c, &c->sb.f, sx->be))
        return SF_CONN_MISMATCH;
    conn_info(&c->sb, conn);
    log_disk(c, "standby: ", &c->sb);
    c->sb_connected = true;
    return 0;
}

/* The failed transport is down (teardown ran): the standby's becomes the
 * live one, by value; the old one's emptied state and event channel handle
 * wait in sb for the next standby. */
static int blk_promote(void *cls)
{
    struct blk_class *c = cls;
    if (!c->sb_connected || !c->sb.ring_up || c->live.ring_up) {
        LOG(c, SF_LOG_ERR, "promotion without a connected standby transport");
        return -1;
    }
    uint32_t rsp_prod, req_event;
    blk_ring_backend_marks(&c->sb.ring, &rsp_prod, &req_event);
    LOG(c, SF_LOG_INFO,
        "standby transport promoted: %" PRIu64 " requests issued and %" PRIu64
        " notifications sent on it before; its backend's rsp_prod %u, req_event %u",
        c->sb.ring.published, c->sb.ring.notified, rsp_prod, req_event);
    struct blk_transport t = c->live;
    c->live = c->sb;
    c->sb = t;
    c->sb_connected = false;
    c->unpushed = 0;
    return 0;
}

static int blk_fd(void *cls)
{
    struct blk_class *c = cls;
    return c->live.ring_up ? xenevtchn_fd(c->live.xce) : -1;
}

static void put_pages(struct blk_class *c, struct blk_slot *s)
{
    for (unsigned i = 0; i < s->npages; i++)
        blk_pool_put(&c->live.pool, s->pages[i]);
    for (unsigned i = 0; i < s->nind; i++)
        blk_pool_put(&c->live.pool, s->ind[i]);
    s->npages = s->nind = 0;
}

/* The live pool is about to share more pages (whole chunks, up to its
 * limit): a failed connection's pool still draining gives back as many
 * first, so that the two stay within the budget (gntalloc's limit may leave
 * no more: the share would fail). */
static void make_room(struct blk_class *c, unsigned need)
{
    const struct blk_pool *p = &c->live.pool;
    if (p->nfree >= need || !c->retired.nchunks)
        return;
    unsigned grow = (need - p->nfree + BLK_POOL_CHUNK - 1) / BLK_POOL_CHUNK * BLK_POOL_CHUNK;
    if (grow > p->max_pages - p->npages)
        grow = p->max_pages - p->npages;
    /* Each step unshares a chunk: at most nchunks steps. */
    for (unsigned freed = 0; freed < grow && c->retired.nchunks;) {
        unsigned before = c->retired.npages;
        blk_pool_release_step(&c->retired);
        freed += before - c->retired.npages;
    }
}

static bool take_pages(struct blk_class *c, struct blk_slot *s, unsigned np, unsigned nind)
{
    s->npages = s->nind = 0;
    if (blk_pool_available(&c->live.pool) < np + nind)
        return false;
    make_room(c, np + nind);
    while (s->npages < np) {
        int pg = blk_pool_get(&c->live.pool);
        if (pg < 0)
            goto fail;
        s->pages[s->npages++] = (uint32_t)pg;
    }
    while (s->nind < nind) {
        int pg = blk_pool_get(&c->live.pool);
        if (pg < 0)
            goto fail;
        s->ind[s->nind++] = (uint32_t)pg;
    }
    return true;
fail:
    put_pages(c, s);
    return false;
}

union blk_req {
    blkif_request_t rw;
    blkif_request_discard_t discard;
    blkif_request_indirect_t indirect;
};

static int issue_rw(struct blk_class *c, struct sfj_entry *e, struct blk_slot *s, int *status)
{
    uint8_t op = e->op == BLK_WRITE ? BLKIF_OP_WRITE : BLKIF_OP_READ;
    unsigned np = (unsigned)((e->len + BLK_PAGE_SIZE - 1) / BLK_PAGE_SIZE);
    if (!np || np > c->live.segs_max || (e->len & ((1u << BLK_SECTOR_SHIFT) - 1))) {
        *status = EIO; /* the engine splits to max_data: cannot happen */
        return 1;
    }
    bool ind = np > BLKIF_MAX_SEGMENTS_PER_REQUEST;
    unsigned nind = ind ? (np + (unsigned)BLK_SEGS_PER_INDIRECT - 1) / BLK_SEGS_PER_INDIRECT : 0;
    if (!take_pages(c, s, np, nind))
        return -1;
    struct blkif_request_segment seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
    for (unsigned i = 0; i < np; i++) {
        uint64_t off = (uint64_t)i * BLK_PAGE_SIZE;
        uint64_t n = e->len - off < BLK_PAGE_SIZE ? e->len - off : BLK_PAGE_SIZE;
        uint8_t *page = blk_pool_addr(&c->live.pool, s->pages[i]);
        if (op == BLKIF_OP_WRITE)
            memcpy(page, (const uint8_t *)e->data + off, n);
        struct blkif_request_segment sg = {.gref = blk_pool_ref(&c->live.pool, s->pages[i]),
                                           .first_sect = 0,
                                           .last_sect = (uint8_t)((n >> BLK_SECTOR_SHIFT) - 1)};
        if (ind) {
            struct blkif_request_segment *tab =
                (void *)blk_pool_addr(&c->live.pool, s->ind[i / BLK_SEGS_PER_INDIRECT]);
            tab[i % BLK_SEGS_PER_INDIRECT] = sg;
        } else {
            seg[i] = sg;
        }
    }
    union blk_req r;
    memset(&r, 0, sizeof(r));
    if (ind) {
        r.indirect.operation = BLKIF_OP_INDIRECT;
        r.indirect.indirect_op = op;
        r.indirect.nr_segments = (uint16_t)np;
        r.indirect.id = e->wire_id;
        r.indirect.sector_number = e->start >> BLK_SECTOR_SHIFT;
        r.indirect.handle = c->handle;
        for (unsigned k = 0; k < nind; k++)
            r.indirect.indirect_grefs[k] = blk_pool_ref(&c->live.pool, s->ind[k]);
        s->wire_op = BLKIF_OP_INDIRECT;
    } else {
        r.rw.operation = op;
        r.rw.nr_segments = (uint8_t)np;
        r.rw.handle = c->handle;
        r.rw.id = e->wire_id;
        r.rw.sector_number = e->start >> BLK_SECTOR_SHIFT;
        memcpy(r.rw.seg, seg, np * sizeof(seg[0]));
        s->wire_op = op;
    }
    s->inner_op = op;
    if (!blk_ring_put(&c->live.ring, &r, sizeof(r.rw))) {
        put_pages(c, s);
        return -1;
    }
    c->unpushed++;
    return 0;
}

static int blk_issue(void *cls, struct sfj_entry *e, int *status)
{
    struct blk_class *c = cls;
    if (!c->live.ring_up || e->slot >= c->live.nslots) {
        *status = EIO;
        return 1;
    }
    struct blk_slot *s = &c->live.slots[e->slot];
    s->npages = s->nind = 0;
    union blk_req r;
    memset(&r, 0, sizeof(r));
    switch (e->op) {
    case BLK_READ:
    case BLK_WRITE:
        return issue_rw(c, e, s, status);
    case BLK_FLUSH:
        if (c->live.f.flush)
            s->wire_op = BLKIF_OP_FLUSH_DISKCACHE;
        else if (c->live.f.barrier)
            s->wire_op = BLKIF_OP_WRITE_BARRIER;
        else {
            /* No write cache to flush: the writes before it are complete. */
            *status = 0;
            return 1;
        }
        r.rw.operation = s->wire_op;
        r.rw.nr_segments = 0;
        r.rw.handle = c->handle;
        r.rw.id = e->wire_id;
        break;
    case BLK_DISCARD:
        if (!c->live.f.discard) {
            *status = 0; /* advisory: a backend without discard keeps the data */
            return 1;
        }
        s->wire_op = BLKIF_OP_DISCARD;
        r.discard.operation = BLKIF_OP_DISCARD;
        r.discard.flag = 0;
        r.discard.handle = c->handle;
        r.discard.id = e->wire_id;
        r.discard.sector_number = e->start >> BLK_SECTOR_SHIFT;
        r.discard.nr_sectors = e->len >> BLK_SECTOR_SHIFT;
        break;
    default:
        *status = EIO;
        return 1;
    }
    s->inner_op = s->wire_op;
    if (!blk_ring_put(&c->live.ring, &r, sizeof(r.rw)))
        return -1;
    c->unpushed++;
    return 0;
}

static void blk_kick(void *cls)
{
    struct blk_class *c = cls;
    if (c->live.ring_up && c->unpushed)
        blk_ring_push(&c->live.ring);
    c->unpushed = 0;
}

static void describe(void *cls, const struct sfj_entry *e, char *buf, size_t len)
{
    (void)cls;
    static const char *const names[] = {"?", "read", "write", "flush", "discard"};
    const char *n = e->op < sizeof(names) / sizeof(names[0]) ? names[e->op] : "?";
    if (e->op == BLK_FLUSH)
        snprintf(buf, len, "%s", n);
    else
        snprintf(buf, len, "%s of sectors %" PRIu64 "+%" PRIu64, n, e->start >> BLK_SECTOR_SHIFT,
                 e->len >> BLK_SECTOR_SHIFT);
}

/* A response the engine validated: copy read data, release pages, map the
 * status. */
static int blk_complete(void *cls, struct sfj_entry *e, int status)
{
    struct blk_class *c = cls;
    struct blk_slot *s = &c->live.slots[e->slot];
    int err = 0;
    char d[96];
    switch (status) {
    case BLKIF_RSP_OKAY:
        if (e->op == BLK_READ)
            for (unsigned i = 0; i < s->npages; i++) {
                uint64_t off = (uint64_t)i * BLK_PAGE_SIZE;
                uint64_t n = e->len - off < BLK_PAGE_SIZE ? e->len - off : BLK_PAGE_SIZE;
                memcpy((uint8_t *)e->data + off, blk_pool_addr(&c->live.pool, s->pages[i]), n);
            }
        break;
    case BLKIF_RSP_EOPNOTSUPP:
        /* Allowed (status_ok) only for flush, barrier and discard. */
        if (s->wire_op == BLKIF_OP_DISCARD) {
            c->live.f.discard = false;
            LOG(c, SF_LOG_ERR, "backend refuses discard; discards are no-ops from now on");
        } else {
            if (s->wire_op == BLKIF_OP_FLUSH_DISKCACHE)
                c->live.f.flush = false;
            else
                c->live.f.barrier = false;
            LOG(c, SF_LOG_ERR,
                "backend refuses %s; it is taken to have no volatile write cache from now on",
                s->wire_op == BLKIF_OP_FLUSH_DISKCACHE ? "flush" : "barrier");
        }
        break;
    default:
        describe(c, e, d, sizeof(d));
        LOG(c, SF_LOG_ERR, "backend reports an I/O error on %s", d);
        err = EIO;
        break;
    }
    put_pages(c, s);
    return err;
}

/* Copy responses out of the ring (each a private copy: the backend may
 * change the ring under us); the engine checks them. */
static int blk_harvest(void *cls, bool event, struct sf_rsp *out, unsigned max, char *why,
                       size_t len)
{
    struct blk_class *c = cls;
    if (!c->live.ring_up)
        return 0;
    if (event)
        blk_ring_ack_event(&c->live.ring);
    unsigned n = 0;
    while (n < max) {
        uint32_t prod;
        int avail = blk_ring_avail(&c->live.ring, &prod);
        if (avail < 0) {
            snprintf(why, len,
                     "impossible response producer index %u (consumed %u, requests produced %u, "
                     "ring of %u)",
                     prod, c->live.ring.fr.rsp_cons, c->live.ring.fr.req_prod_pvt, c->live.nslots);
            return -1;
        }
        if (avail == 0) {
            if (!blk_ring_final_check(&c->live.ring))
                break;
            continue;
        }
        for (int i = 0; i < avail && n < max; i++) {
            blkif_response_t rsp;
            blk_ring_take(&c->live.ring, &rsp);
            out[n++] = (struct sf_rsp){.id = rsp.id, .op = rsp.operation, .status = rsp.status};
        }
    }
    return (int)n;
}

static bool op_matches(void *cls, const struct sfj_entry *e, unsigned rsp_op)
{
    struct blk_class *c = cls;
    const struct blk_slot *s = &c->live.slots[e->slot];
    return rsp_op == s->wire_op || (s->wire_op == BLKIF_OP_INDIRECT && rsp_op == s->inner_op);
}

static bool status_ok(void *cls, const struct sfj_entry *e, int status)
{
    struct blk_class *c = cls;
    const struct blk_slot *s = &c->live.slots[e->slot];
    if (status == BLKIF_RSP_OKAY || status == BLKIF_RSP_ERROR)
        return true;
    return status == BLKIF_RSP_EOPNOTSUPP &&
           (s->wire_op == BLKIF_OP_FLUSH_DISKCACHE || s->wire_op == BLKIF_OP_WRITE_BARRIER ||
            s->wire_op == BLKIF_OP_DISCARD);
}

static const struct sfv_rules blk_rules = {.op_matches = op_matches, .status_ok = status_ok};

const struct sf_class_ops blk_class_ops = {
    .name = "vbd",
    .flush_op = BLK_FLUSH,
    .setup = blk_setup,
    .connect = blk_connect,
    .teardown = blk_teardown,
    .fd = blk_fd,
    .issue = blk_issue,
    .kick = blk_kick,
    .harvest = blk_harvest,
    .complete = blk_complete,
    .describe = describe,
    .rules = &blk_rules,
    .standby_setup = blk_standby_setup,
    .standby_connect = blk_standby_connect,
    .standby_teardown = blk_standby_teardown,
    .promote = blk_promote,
    .forget = blk_forget,
    .background = blk_background,
};

struct blk_class *blk_class_new(const struct blk_class_config *cfg, uint16_t handle,
                                const char **why)
{
    struct blk_class *c = calloc(1, sizeof(*c));
    if (!c) {
        *why = "calloc";
        return NULL;
    }
    c->lim = (struct blk_limits){.max_ring_order = cfg->max_ring_order,
                                 .max_grants = cfg->max_grants,
                                 .max_indirect = cfg->max_indirect};
    c->handle = handle;
    if (c->lim.max_grants < MIN_DATA_PAGES + 1u) {
        free(c);
        *why = "max-grants (too small)";
        errno = EINVAL;
        return NULL;
    }
    c->gs = xengntshr_open(NULL, 0);
    if (!c->gs) {
        *why = "xengntshr_open";
        goto fail;
    }
    if (blk_transport_open(&c->live) < 0 || blk_transport_open(&c->sb) < 0) {
        *why = "xenevtchn_open";
        goto fail;
    }
    return c;
fail : {
    int e = errno;
    blk_class_free(c);
    errno = e;
    return NULL;
}
}

void blk_class_free(struct blk_class *c)
{
    if (!c)
        return;
    blk_transport_close(&c->sb);
    blk_transport_close(&c->live);
    blk_pool_fini(&c->retired);
    if (c->gs)
        xengntshr_close(c->gs);
    free(c);
}

void blk_class_set_engine(struct blk_class *c, struct sf_engine *eng)
{
    c->eng = eng;
}

uint64_t blk_class_size(const struct blk_class *c)
{
    return c->first.sectors << BLK_SECTOR_SHIFT;
}

uint32_t blk_class_sector_size(const struct blk_class *c)
{
    return c->first.sector_size;
}

bool blk_class_can_trim(const struct blk_class *c)
{
    return c->first.discard;
}

bool blk_class_readonly(const struct blk_class *c)
{
    return (c->first.info & VDISK_READONLY) != 0;
}
