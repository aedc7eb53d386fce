/* blk_class.c - the blkif class: entries to ring requests and back. */
#define _GNU_SOURCE
#include "blk_class.h"

#include "blk_pool.h"
#include "blk_ring.h"
#include "blk_xen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_DATA_PAGES 16u /* a budget leaving fewer data pages is refused */

/* What one ring slot carries while its request is outstanding. */
struct blk_slot {
    uint8_t wire_op;  /* operation on the ring */
    uint8_t inner_op; /* BLKIF_OP_INDIRECT: the read or write inside */
    uint16_t npages;
    uint16_t nind;
    uint32_t *pages; /* data pages (pool numbers), segs_max of them */
    uint32_t ind[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
};

struct blk_class {
    struct blk_class_config cfg;
    uint16_t handle;
    xengntshr_handle *gs;
    xenevtchn_handle *xce;
    struct sf_engine *eng;
    /* the connection */
    struct blk_ring ring;
    struct blk_pool pool;
    bool ring_up, pool_up, published;
    struct blk_features f;
    unsigned segs_max;
    bool indirect;
    struct blk_slot *slots;
    unsigned nslots;
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

static void free_slots(struct blk_class *c)
{
    if (c->slots)
        for (unsigned i = 0; i < c->nslots; i++)
            free(c->slots[i].pages);
    free(c->slots);
    c->slots = NULL;
    c->nslots = 0;
}

static void blk_teardown(void *cls, struct sfx *x)
{
    struct blk_class *c = cls;
    if (c->ring_up)
        blk_ring_teardown(&c->ring);
    if (c->pool_up)
        blk_pool_fini(&c->pool);
    c->ring_up = c->pool_up = false;
    free_slots(c);
    c->unpushed = 0;
    if (c->published && x)
        blk_remove_transport(x);
    c->published = false;
}

static int blk_setup(void *cls, struct sfx *x)
{
    struct blk_class *c = cls;
    const char *why;
    if (blk_read_transport(x, &c->f, &why) < 0) {
        LOG(c, SF_LOG_ERR, "backend %s: bad %s: %m", x->be, why);
        return -1;
    }
    unsigned order = c->f.max_ring_order;
    if (order > c->cfg.max_ring_order)
        order = c->cfg.max_ring_order;
    if (order > BLK_MAX_RING_ORDER)
        order = BLK_MAX_RING_ORDER;
    while (order && (1u << order) + MIN_DATA_PAGES > c->cfg.max_grants)
        order--;
    if (blk_ring_setup(&c->ring, c->gs, c->xce, x->be_id, order) < 0) {
        LOG(c, SF_LOG_ERR, "share a %u-page ring with domain %u and bind a port: %m", 1u << order,
            x->be_id);
        return -1;
    }
    c->ring_up = true;
    if (blk_pool_init(&c->pool, c->gs, x->be_id, c->cfg.max_grants - (1u << order)) < 0) {
        LOG(c, SF_LOG_ERR, "data page pool for domain %u: %m", x->be_id);
        return -1;
    }
    c->pool_up = true;
    c->published = true;
    if (blk_write_transport(x, c->ring.refs, order, c->ring.port) < 0) {
        LOG(c, SF_LOG_ERR, "xenstore: write the transport keys under %s: %m", x->fe);
        return -1;
    }
    LOG(c, SF_LOG_DEBUG, "shared a %u-page ring (%u requests) with domain %u, port %u", 1u << order,
        blk_ring_size(&c->ring), x->be_id, c->ring.port);
    return 0;
}

static int blk_connect(void *cls, struct sfx *x, bool first, struct sf_conn_info *conn)
{
    struct blk_class *c = cls;
    (void)first;
    struct blk_features f = c->f;
    const char *why;
    if (blk_read_device(x, &f, &why) < 0) {
        LOG(c, SF_LOG_ERR, "backend %s: bad or missing %s: %m", x->be, why);
        return -1;
    }
    if (!c->have_first) {
        c->first = f;
        c->have_first = true;
    } else if (f.sectors != c->first.sectors || f.sector_size != c->first.sector_size) {
        LOG(c, SF_LOG_ERR,
            "backend %s serves %" PRIu64 " sectors with sector-size %u; the disk had %" PRIu64
            " with %u",
            x->be, f.sectors, f.sector_size, c->first.sectors, c->first.sector_size);
        return SF_CONN_MISMATCH;
    }
    c->f = f;
    unsigned segs = BLKIF_MAX_SEGMENTS_PER_REQUEST, nind = 0;
    c->indirect = false;
    if (f.max_indirect && c->cfg.max_indirect > BLKIF_MAX_SEGMENTS_PER_REQUEST) {
        unsigned s = f.max_indirect < c->cfg.max_indirect ? f.max_indirect : c->cfg.max_indirect;
        unsigned cap = BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST * (unsigned)BLK_SEGS_PER_INDIRECT;
        if (s > cap)
            s = cap;
        nind = (s + (unsigned)BLK_SEGS_PER_INDIRECT - 1) / (unsigned)BLK_SEGS_PER_INDIRECT;
        if (s + nind > c->pool.max_pages)
            s = c->pool.max_pages - nind;
        if (s > BLKIF_MAX_SEGMENTS_PER_REQUEST) {
            segs = s;
            c->indirect = true;
        }
    }
    c->segs_max = segs;
    c->nslots = blk_ring_size(&c->ring);
    c->slots = calloc(c->nslots, sizeof(*c->slots));
    if (!c->slots) {
        c->nslots = 0;
        return -1;
    }
    for (unsigned i = 0; i < c->nslots; i++) {
        c->slots[i].pages = calloc(segs, sizeof(uint32_t));
        if (!c->slots[i].pages) {
            free_slots(c);
            return -1;
        }
    }
    conn->nslots = c->nslots;
    conn->write_cache = f.flush || f.barrier;
    conn->max_data = (uint64_t)segs * BLK_PAGE_SIZE;
    LOG(c, SF_LOG_DEBUG,
        "disk %" PRIu64 " sectors, sector-size %u; %u segments per request%s; flush %d, "
        "barrier %d, discard %d, persistent %d",
        f.sectors, f.sector_size, segs, c->indirect ? " (indirect)" : "", f.flush, f.barrier,
        f.discard, f.persistent);
    return 0;
}

static int blk_fd(void *cls)
{
    struct blk_class *c = cls;
    return c->ring_up ? xenevtchn_fd(c->xce) : -1;
}

static void put_pages(struct blk_class *c, struct blk_slot *s)
{
    for (unsigned i = 0; i < s->npages; i++)
        blk_pool_put(&c->pool, s->pages[i]);
    for (unsigned i = 0; i < s->nind; i++)
        blk_pool_put(&c->pool, s->ind[i]);
    s->npages = s->nind = 0;
}

static bool take_pages(struct blk_class *c, struct blk_slot *s, unsigned np, unsigned nind)
{
    s->npages = s->nind = 0;
    if (blk_pool_available(&c->pool) < np + nind)
        return false;
    while (s->npages < np) {
        int pg = blk_pool_get(&c->pool);
        if (pg < 0)
            goto fail;
        s->pages[s->npages++] = (uint32_t)pg;
    }
    while (s->nind < nind) {
        int pg = blk_pool_get(&c->pool);
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
    if (!np || np > c->segs_max || (e->len & ((1u << BLK_SECTOR_SHIFT) - 1))) {
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
        uint8_t *page = blk_pool_addr(&c->pool, s->pages[i]);
        if (op == BLKIF_OP_WRITE)
            memcpy(page, (const uint8_t *)e->data + off, n);
        struct blkif_request_segment sg = {.gref = blk_pool_ref(&c->pool, s->pages[i]),
                                           .first_sect = 0,
                                           .last_sect = (uint8_t)((n >> BLK_SECTOR_SHIFT) - 1)};
        if (ind) {
            struct blkif_request_segment *tab =
                (void *)blk_pool_addr(&c->pool, s->ind[i / BLK_SEGS_PER_INDIRECT]);
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
            r.indirect.indirect_grefs[k] = blk_pool_ref(&c->pool, s->ind[k]);
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
    if (!blk_ring_put(&c->ring, &r, sizeof(r.rw))) {
        put_pages(c, s);
        return -1;
    }
    c->unpushed++;
    return 0;
}

static int blk_issue(void *cls, struct sfj_entry *e, int *status)
{
    struct blk_class *c = cls;
    if (!c->ring_up || e->slot >= c->nslots) {
        *status = EIO;
        return 1;
    }
    struct blk_slot *s = &c->slots[e->slot];
    s->npages = s->nind = 0;
    union blk_req r;
    memset(&r, 0, sizeof(r));
    switch (e->op) {
    case BLK_READ:
    case BLK_WRITE:
        return issue_rw(c, e, s, status);
    case BLK_FLUSH:
        if (c->f.flush)
            s->wire_op = BLKIF_OP_FLUSH_DISKCACHE;
        else if (c->f.barrier)
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
        if (!c->f.discard) {
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
    if (!blk_ring_put(&c->ring, &r, sizeof(r.rw)))
        return -1;
    c->unpushed++;
    return 0;
}

static void blk_kick(void *cls)
{
    struct blk_class *c = cls;
    if (c->ring_up && c->unpushed)
        blk_ring_push(&c->ring);
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
    struct blk_slot *s = &c->slots[e->slot];
    int err = 0;
    char d[96];
    switch (status) {
    case BLKIF_RSP_OKAY:
        if (e->op == BLK_READ)
            for (unsigned i = 0; i < s->npages; i++) {
                uint64_t off = (uint64_t)i * BLK_PAGE_SIZE;
                uint64_t n = e->len - off < BLK_PAGE_SIZE ? e->len - off : BLK_PAGE_SIZE;
                memcpy((uint8_t *)e->data + off, blk_pool_addr(&c->pool, s->pages[i]), n);
            }
        break;
    case BLKIF_RSP_EOPNOTSUPP:
        /* Allowed (status_ok) only for flush, barrier and discard. */
        if (s->wire_op == BLKIF_OP_DISCARD) {
            c->f.discard = false;
            LOG(c, SF_LOG_ERR, "backend refuses discard; discards are no-ops from now on");
        } else {
            if (s->wire_op == BLKIF_OP_FLUSH_DISKCACHE)
                c->f.flush = false;
            else
                c->f.barrier = false;
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
    if (!c->ring_up)
        return 0;
    if (event)
        blk_ring_ack_event(&c->ring);
    unsigned n = 0;
    while (n < max) {
        uint32_t prod;
        int avail = blk_ring_avail(&c->ring, &prod);
        if (avail < 0) {
            snprintf(why, len,
                     "impossible response producer index %u (consumed %u, requests produced %u, "
                     "ring of %u)",
                     prod, c->ring.fr.rsp_cons, c->ring.fr.req_prod_pvt, c->nslots);
            return -1;
        }
        if (avail == 0) {
            if (!blk_ring_final_check(&c->ring))
                break;
            continue;
        }
        for (int i = 0; i < avail && n < max; i++) {
            blkif_response_t rsp;
            blk_ring_take(&c->ring, &rsp);
            out[n++] = (struct sf_rsp){.id = rsp.id, .op = rsp.operation, .status = rsp.status};
        }
    }
    return (int)n;
}

static bool op_matches(void *cls, const struct sfj_entry *e, unsigned rsp_op)
{
    struct blk_class *c = cls;
    const struct blk_slot *s = &c->slots[e->slot];
    return rsp_op == s->wire_op || (s->wire_op == BLKIF_OP_INDIRECT && rsp_op == s->inner_op);
}

static bool status_ok(void *cls, const struct sfj_entry *e, int status)
{
    struct blk_class *c = cls;
    const struct blk_slot *s = &c->slots[e->slot];
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
};

struct blk_class *blk_class_new(const struct blk_class_config *cfg, uint16_t handle,
                                const char **why)
{
    struct blk_class *c = calloc(1, sizeof(*c));
    if (!c) {
        *why = "calloc";
        return NULL;
    }
    c->cfg = *cfg;
    c->handle = handle;
    if (c->cfg.max_grants < MIN_DATA_PAGES + 1u) {
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
    c->xce = xenevtchn_open(NULL, 0);
    if (!c->xce) {
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
    blk_teardown(c, NULL);
    if (c->xce)
        xenevtchn_close(c->xce);
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
