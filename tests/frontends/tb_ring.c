/* tb_ring.c - testback's connection: the frontend's ring and port, the
 * requests on it, and the responses (honest or, when told, hostile). */
#define _GNU_SOURCE
#include "tb.h"
#include "pv-keys.h"

#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PG_CAP 4096u /* persistent grants kept mapped, at most */

struct pgrant {
    uint32_t ref; /* 0: empty (refs below 8 are reserved) */
    void *addr;
};

struct tb_conn {
    struct tb_backend *b;
    void *ring;
    unsigned npages;
    blkif_back_ring_t br;
    evtchn_port_t port;
    bool bound;
    bool persistent;
    struct pgrant *pg; /* open addressing by ref */
    unsigned pg_used;
    uint64_t last_id;
    bool broken; /* the frontend misbehaved: serve nothing more */
};

struct tb_conn *tb_conn_open(struct tb_backend *b)
{
    struct tb_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->b = b;
    uint64_t order = 0, port, persistent = 0;
    uint32_t refs[16];
    if (xsu_read_u64_default(b->xs, XBT_NULL, b->fe, PVK_BLK_RING_PAGE_ORDER, b->o.max_ring_order,
                             0, &order) < 0) {
        tb_log("frontend %s: bad ring-page-order: %m", b->fe);
        goto fail;
    }
    c->npages = 1u << order;
    for (unsigned i = 0; i < c->npages; i++) {
        char key[32];
        if (order)
            snprintf(key, sizeof(key), PVK_BLK_RING_REF_FMT, i);
        else
            snprintf(key, sizeof(key), PVK_RING_REF);
        uint64_t r;
        if (xsu_read_u64(b->xs, XBT_NULL, b->fe, key, UINT32_MAX, &r) < 0) {
            tb_log("frontend %s: bad %s: %m", b->fe, key);
            goto fail;
        }
        refs[i] = (uint32_t)r;
    }
    if (xsu_read_u64(b->xs, XBT_NULL, b->fe, PVK_EVENT_CHANNEL, UINT32_MAX, &port) < 0) {
        tb_log("frontend %s: bad event-channel: %m", b->fe);
        goto fail;
    }
    char *proto = xsu_read(b->xs, XBT_NULL, b->fe, PVK_PROTOCOL, 64);
    if (proto && strcmp(proto, XEN_IO_PROTO_ABI_NATIVE)) {
        tb_log("frontend %s: protocol %s not supported", b->fe, proto);
        free(proto);
        goto fail;
    }
    free(proto);
    xsu_read_u64_default(b->xs, XBT_NULL, b->fe, PVK_BLK_FEATURE_PERSISTENT, 1, 0, &persistent);
    c->persistent = persistent && b->o.persistent;
    c->ring =
        xengnttab_map_domain_grant_refs(b->xgt, c->npages, b->fe_id, refs, PROT_READ | PROT_WRITE);
    if (!c->ring) {
        tb_log("map the %u-page ring of domain %u: %m", c->npages, b->fe_id);
        goto fail;
    }
    BACK_RING_INIT(&c->br, (blkif_sring_t *)c->ring, (size_t)c->npages * BLK_PAGE_SIZE);
    xenevtchn_port_or_error_t lp = xenevtchn_bind_interdomain(b->xce, b->fe_id, (uint32_t)port);
    if (lp < 0) {
        tb_log("bind to port %u of domain %u: %m", (unsigned)port, b->fe_id);
        goto fail;
    }
    c->port = (evtchn_port_t)lp;
    c->bound = true;
    if (c->persistent) {
        c->pg = calloc(PG_CAP * 2, sizeof(*c->pg));
        if (!c->pg)
            goto fail;
    }
    tb_log("TESTBACK-CONNECTED ring of %u pages (%u requests), port %u, persistent %d", c->npages,
           RING_SIZE(&c->br), c->port, c->persistent);
    return c;
fail:
    tb_conn_close(c);
    return NULL;
}

void tb_conn_close(struct tb_conn *c)
{
    if (!c)
        return;
    if (c->pg)
        for (unsigned i = 0; i < PG_CAP * 2; i++)
            if (c->pg[i].ref)
                xengnttab_unmap(c->b->xgt, c->pg[i].addr, 1);
    free(c->pg);
    if (c->bound)
        xenevtchn_unbind(c->b->xce, c->port);
    if (c->ring)
        xengnttab_unmap(c->b->xgt, c->ring, c->npages);
    free(c);
}

/* A data page of the frontend: from the persistent map, or mapped now
 * (*temp: unmap it after use). */
static void *get_page(struct tb_conn *c, uint32_t ref, bool *temp)
{
    *temp = false;
    unsigned cap = PG_CAP * 2, i = (ref * 2654435761u) & (cap - 1);
    if (c->pg) {
        for (;; i = (i + 1) & (cap - 1)) {
            if (c->pg[i].ref == ref)
                return c->pg[i].addr;
            if (!c->pg[i].ref)
                break;
        }
    }
    void *p = xengnttab_map_grant_ref(c->b->xgt, c->b->fe_id, ref, PROT_READ | PROT_WRITE);
    if (!p)
        return NULL;
    if (c->pg && c->pg_used < PG_CAP && ref) {
        c->pg[i].ref = ref;
        c->pg[i].addr = p;
        c->pg_used++;
    } else {
        *temp = true;
    }
    return p;
}

static int16_t do_segments(struct tb_conn *c, bool write, uint64_t sector,
                           const struct blkif_request_segment *seg, unsigned nseg)
{
    struct tb_backend *b = c->b;
    for (unsigned i = 0; i < nseg; i++) {
        if (seg[i].first_sect > seg[i].last_sect || seg[i].last_sect >= BLK_SECTORS_PER_PG)
            return BLKIF_RSP_ERROR;
        uint64_t n = (uint64_t)(seg[i].last_sect - seg[i].first_sect + 1);
        if (sector > b->sectors || n > b->sectors - sector)
            return BLKIF_RSP_ERROR;
        bool temp;
        uint8_t *page = get_page(c, seg[i].gref, &temp);
        if (!page) {
            tb_log("map grant %u of domain %u: %m", seg[i].gref, b->fe_id);
            return BLKIF_RSP_ERROR;
        }
        uint8_t *p = page + ((size_t)seg[i].first_sect << BLK_SECTOR_SHIFT);
        size_t len = (size_t)n << BLK_SECTOR_SHIFT;
        uint64_t off = sector << BLK_SECTOR_SHIFT;
        int r =
            write ? tb_store_write(b->store, p, len, off) : tb_store_read(b->store, p, len, off);
        if (temp)
            xengnttab_unmap(b->xgt, page, 1);
        if (r < 0) {
            tb_log("%s %zu bytes at %llu: %m", write ? "write" : "read", len,
                   (unsigned long long)off);
            return BLKIF_RSP_ERROR;
        }
        sector += n;
    }
    return BLKIF_RSP_OKAY;
}

static int16_t do_indirect(struct tb_conn *c, const blkif_request_indirect_t *r)
{
    struct tb_backend *b = c->b;
    unsigned nseg = r->nr_segments;
    if (!b->o.max_indirect || nseg == 0 || nseg > b->o.max_indirect ||
        (r->indirect_op != BLKIF_OP_READ && r->indirect_op != BLKIF_OP_WRITE))
        return BLKIF_RSP_ERROR;
    unsigned nind = (nseg + (unsigned)BLK_SEGS_PER_INDIRECT - 1) / BLK_SEGS_PER_INDIRECT;
    if (nind > BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST)
        return BLKIF_RSP_ERROR;
    struct blkif_request_segment *segs = calloc(nseg, sizeof(*segs));
    if (!segs)
        return BLKIF_RSP_ERROR;
    for (unsigned k = 0; k < nind; k++) {
        bool temp;
        struct blkif_request_segment *tab = get_page(c, r->indirect_grefs[k], &temp);
        if (!tab) {
            free(segs);
            return BLKIF_RSP_ERROR;
        }
        unsigned n = nseg - k * (unsigned)BLK_SEGS_PER_INDIRECT;
        if (n > BLK_SEGS_PER_INDIRECT)
            n = BLK_SEGS_PER_INDIRECT;
        memcpy(segs + k * BLK_SEGS_PER_INDIRECT, tab, n * sizeof(*segs));
        if (temp)
            xengnttab_unmap(b->xgt, tab, 1);
    }
    int16_t st = do_segments(c, r->indirect_op == BLKIF_OP_WRITE, r->sector_number, segs, nseg);
    free(segs);
    return st;
}

static void push(struct tb_conn *c)
{
    int notify;
    RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(&c->br, notify);
    if (notify)
        xenevtchn_notify(c->b->xce, c->port);
}

static void put_response(struct tb_conn *c, const blkif_response_t *rsp)
{
    *RING_GET_RESPONSE(&c->br, c->br.rsp_prod_pvt) = *rsp;
    c->br.rsp_prod_pvt++;
}

static uint8_t wrong_op(uint8_t op, uint8_t inner)
{
    for (;;) {
        uint8_t o = (uint8_t)(tb_rand() % 7);
        if (o != op && o != inner)
            return o;
    }
}

/* Send rsp as the act says. */
static void respond(struct tb_conn *c, blkif_response_t rsp, uint8_t inner)
{
    struct tb_backend *b = c->b;
    enum tb_act act = tb_hostile_next(b);
    if (act != TB_ACT_NONE) {
        b->acts[act]++;
        tb_log("HOSTILE %s (request id %#llx op %u)", tb_act_name(act), (unsigned long long)rsp.id,
               rsp.operation);
    }
    if (b->slow_ms)
        usleep(b->slow_ms * 1000u);
    uint64_t real_id = rsp.id;
    switch (act) {
    case TB_ACT_RANDOM_ID:
        do
            rsp.id = tb_rand();
        while (rsp.id == real_id);
        break;
    case TB_ACT_DUPLICATE:
        rsp.id = c->last_id ? c->last_id : tb_rand();
        break;
    case TB_ACT_WRONG_OP:
        rsp.operation = wrong_op(rsp.operation, inner);
        break;
    case TB_ACT_BAD_STATUS:
        do
            rsp.status = (int16_t)tb_rand();
        while (rsp.status >= -2 && rsp.status <= 0);
        break;
    case TB_ACT_DROP:
        return;
    case TB_ACT_SCRIBBLE_RING: {
        uint8_t junk[sizeof(rsp)];
        for (size_t i = 0; i < sizeof(junk); i++)
            junk[i] = (uint8_t)tb_rand();
        memcpy(&rsp, junk, sizeof(rsp));
        break;
    }
    case TB_ACT_STATE: {
        static const char *const junk[] = {"2", "6", "5", "1", "banana", "-1", "99999999999"};
        const char *v = junk[tb_rand() % (sizeof(junk) / sizeof(junk[0]))];
        xsu_printf(b->xs, XBT_NULL, b->be, PVK_STATE, "%s", v);
        break;
    }
    default:
        break;
    }
    put_response(c, &rsp);
    if (act == TB_ACT_EXTRA_RESPONSE) {
        blkif_response_t x = rsp;
        x.id = tb_rand();
        put_response(c, &x);
    }
    if (act != TB_ACT_DUPLICATE)
        c->last_id = real_id;
    push(c);
    if (act == TB_ACT_GARBAGE_PROD) {
        c->br.sring->rsp_prod = c->br.rsp_prod_pvt + 1000u + (uint32_t)(tb_rand() % 100000u);
        xenevtchn_notify(b->xce, c->port);
        c->broken = true; /* a later push would overwrite it: serve no more */
    }
    if (act == TB_ACT_EVENT_STORM)
        for (int i = 0; i < 200; i++)
            xenevtchn_notify(b->xce, c->port);
}

static void handle(struct tb_conn *c, const blkif_request_t *req)
{
    struct tb_backend *b = c->b;
    union {
        blkif_request_t rw;
        blkif_request_discard_t discard;
        blkif_request_indirect_t indirect;
    } r;
    memcpy(&r, req, sizeof(r.rw));
    blkif_response_t rsp = {.id = r.rw.id, .operation = r.rw.operation};
    uint8_t inner = r.rw.operation;
    switch (r.rw.operation) {
    case BLKIF_OP_READ:
    case BLKIF_OP_WRITE:
        if (r.rw.nr_segments == 0 || r.rw.nr_segments > BLKIF_MAX_SEGMENTS_PER_REQUEST)
            rsp.status = BLKIF_RSP_ERROR;
        else
            rsp.status = do_segments(c, r.rw.operation == BLKIF_OP_WRITE, r.rw.sector_number,
                                     r.rw.seg, r.rw.nr_segments);
        break;
    case BLKIF_OP_INDIRECT:
        inner = r.indirect.indirect_op;
        rsp.operation = inner; /* as Linux's blkback answers */
        rsp.status = do_indirect(c, &r.indirect);
        break;
    case BLKIF_OP_FLUSH_DISKCACHE:
    case BLKIF_OP_WRITE_BARRIER:
        if ((r.rw.operation == BLKIF_OP_FLUSH_DISKCACHE && !b->o.flush) ||
            (r.rw.operation == BLKIF_OP_WRITE_BARRIER && !b->o.barrier))
            rsp.status = BLKIF_RSP_EOPNOTSUPP;
        else
            rsp.status = tb_store_flush(b->store) < 0 ? BLKIF_RSP_ERROR : BLKIF_RSP_OKAY;
        break;
    case BLKIF_OP_DISCARD:
        if (!b->o.discard)
            rsp.status = BLKIF_RSP_EOPNOTSUPP;
        else if (r.discard.sector_number > b->sectors ||
                 r.discard.nr_sectors > b->sectors - r.discard.sector_number)
            rsp.status = BLKIF_RSP_ERROR;
        else
            rsp.status = tb_store_discard(b->store, r.discard.nr_sectors << BLK_SECTOR_SHIFT,
                                          r.discard.sector_number << BLK_SECTOR_SHIFT) < 0
                             ? BLKIF_RSP_ERROR
                             : BLKIF_RSP_OKAY;
        break;
    default:
        rsp.status = BLKIF_RSP_EOPNOTSUPP;
        break;
    }
    b->served++;
    respond(c, rsp, inner);
}

unsigned tb_conn_serve(struct tb_conn *c, bool event)
{
    struct tb_backend *b = c->b;
    if (event) {
        xenevtchn_port_or_error_t p = xenevtchn_pending(b->xce);
        if (p >= 0)
            xenevtchn_unmask(b->xce, (evtchn_port_t)p);
    }
    if (b->hang || c->broken)
        return 0;
    unsigned n = 0;
    for (;;) {
        RING_IDX rp = __atomic_load_n(&c->br.sring->req_prod, __ATOMIC_ACQUIRE);
        if (RING_REQUEST_PROD_OVERFLOW(&c->br, rp)) {
            tb_log("frontend produced %u requests on a ring of %u: ignoring it",
                   rp - c->br.req_cons, RING_SIZE(&c->br));
            c->broken = true;
            return n;
        }
        while (c->br.req_cons != rp && !b->hang && !c->broken) {
            blkif_request_t req;
            RING_COPY_REQUEST(&c->br, c->br.req_cons, &req);
            c->br.req_cons++;
            handle(c, &req);
            n++;
        }
        if (b->hang || c->broken)
            break;
        int more;
        RING_FINAL_CHECK_FOR_REQUESTS(&c->br, more);
        if (!more)
            break;
    }
    return n;
}
