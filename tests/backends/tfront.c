/* tfront.c - the test frontend (see tfront.h). */
#define _GNU_SOURCE
#include "tfront.h"

#include "pv-keys.h"
#include "xs_txn.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xen/io/protocols.h>
#include <xen/io/xenbus.h>

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int tferr(struct tf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tferr(struct tf *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->err, sizeof(t->err), fmt, ap);
    va_end(ap);
    return -1;
}

void tf_default_opts(struct tf_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->queues = 1;
    o->seg_first = 0;
    o->seg_count = 8;
    o->timeout_ms = 20000;
}

static char *rd(struct tf *t, const char *dir, const char *key)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, key);
    unsigned len;
    return xs_read(t->xs, XBT_NULL, p, &len);
}

static int rd_u64(struct tf *t, const char *dir, const char *key, uint64_t dflt, uint64_t *out)
{
    char *v = rd(t, dir, key);
    if (!v) {
        *out = dflt;
        return errno == ENOENT ? 0 : -1;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    int bad = !*v || *end || errno;
    free(v);
    if (bad)
        return -1;
    *out = x;
    return 0;
}

static int wr(struct tf *t, xs_transaction_t x, const char *dir, const char *key, const char *fmt,
              ...) __attribute__((format(printf, 5, 6)));
static int wr(struct tf *t, xs_transaction_t x, const char *dir, const char *key, const char *fmt,
              ...)
{
    char p[512], v[256];
    snprintf(p, sizeof(p), "%s/%s", dir, key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    return xs_write(t->xs, x, p, v, strlen(v)) ? 0 : -1;
}

struct tf *tf_open(const char *fe)
{
    struct tf *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    snprintf(t->fe, sizeof(t->fe), "%s", fe);
    tf_default_opts(&t->o);
    t->xs = xs_open(0);
    t->gs = xengntshr_open(NULL, 0);
    t->xce = xenevtchn_open(NULL, 0);
    if (!t->xs || !t->gs || !t->xce) {
        fprintf(stderr, "tfront: opening xenstore/gntshr/evtchn: %s\n", strerror(errno));
        tf_free(t);
        return NULL;
    }
    t->next_id = 0x1000;
    return t;
}

static int read_backend(struct tf *t)
{
    char *be = rd(t, t->fe, PVK_BACKEND);
    uint64_t id;
    if (!be || rd_u64(t, t->fe, PVK_BACKEND_ID, 0, &id) < 0) {
        free(be);
        return tferr(t, "%s: no backend/backend-id", t->fe);
    }
    snprintf(t->be, sizeof(t->be), "%s", be);
    free(be);
    t->be_domid = (unsigned)id;
    return 0;
}

int tf_write_state(struct tf *t, int state)
{
    return wr(t, XBT_NULL, t->fe, PVK_STATE, "%d", state);
}

int tf_wait_state(struct tf *t, const char *dir, unsigned mask, unsigned timeout_ms)
{
    uint64_t end = now_ms() + timeout_ms;
    int last = -1;
    for (;;) {
        uint64_t v;
        if (rd_u64(t, dir, PVK_STATE, 0, &v) == 0 && v < 32) {
            last = (int)v;
            if (mask & (1u << v))
                return (int)v;
        }
        if (now_ms() >= end) {
            tferr(t, "%s/state is %d after %u ms (waiting for mask %#x)", dir, last, timeout_ms,
                  mask);
            return -1;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void free_queue(struct tf *t, struct tf_queue *q, unsigned pages)
{
    if (q->bound)
        xenevtchn_unbind(t->xce, q->port);
    if (q->ring)
        xengntshr_unshare(t->gs, q->ring, pages);
    memset(q, 0, sizeof(*q));
}

void tf_drop(struct tf *t)
{
    for (unsigned i = 0; i < TF_MAX_QUEUES; i++)
        free_queue(t, &t->q[i], 1u << t->o.order);
    if (t->data)
        xengntshr_unshare(t->gs, t->data, TF_DATA_PAGES);
    if (t->ind)
        xengntshr_unshare(t->gs, t->ind, TF_IND_PAGES);
    t->data = t->ind = NULL;
    t->nq = 0;
    t->connected = false;
}

void tf_free(struct tf *t)
{
    if (!t)
        return;
    tf_drop(t);
    if (t->xce)
        xenevtchn_close(t->xce);
    if (t->gs)
        xengntshr_close(t->gs);
    if (t->xs)
        xs_close(t->xs);
    free(t);
}

/* Share count pages in chunks (one grant object per chunk is enough for tests). */
static void *share(struct tf *t, unsigned count, uint32_t *refs)
{
    return xengntshr_share_pages(t->gs, t->be_domid, (int)count, refs, 1);
}

static int read_features(struct tf *t)
{
    uint64_t v;
    if (rd_u64(t, t->be, PVK_BLK_SECTORS, 0, &t->sectors) < 0 || !t->sectors)
        return tferr(t, "%s/sectors missing or malformed", t->be);
    rd_u64(t, t->be, PVK_BLK_FEATURE_MAX_INDIRECT, 0, &v);
    t->max_indirect = (unsigned)v;
    rd_u64(t, t->be, PVK_BLK_MAX_RING_PAGE_ORDER, 0, &v);
    t->max_order = (unsigned)v;
    rd_u64(t, t->be, PVK_MQ_MAX_QUEUES, 1, &v);
    t->max_queues = (unsigned)v;
    rd_u64(t, t->be, PVK_BLK_FEATURE_PERSISTENT, 0, &v);
    t->be_persistent = v;
    rd_u64(t, t->be, PVK_BLK_FEATURE_FLUSH, 0, &v);
    t->be_flush = v;
    rd_u64(t, t->be, PVK_BLK_FEATURE_BARRIER, 0, &v);
    t->be_barrier = v;
    rd_u64(t, t->be, PVK_BLK_FEATURE_DISCARD, 0, &v);
    t->be_discard = v;
    return 0;
}

static int setup_queue(struct tf *t, struct tf_queue *q)
{
    unsigned pages = 1u << t->o.order;
    q->ring = share(t, pages, q->ring_refs);
    if (!q->ring)
        return tferr(t, "sharing %u ring pages: %s", pages, strerror(errno));
    blkif_sring_t *s = q->ring;
    SHARED_RING_INIT(s);
    FRONT_RING_INIT(&q->fr, s, (size_t)TF_PAGE * pages);
    int port = xenevtchn_bind_unbound_port(t->xce, t->be_domid);
    if (port < 0)
        return tferr(t, "xenevtchn_bind_unbound_port(%u): %s", t->be_domid, strerror(errno));
    q->port = (evtchn_port_t)port;
    q->bound = true;
    return 0;
}

static void rm_key(struct tf *t, xs_transaction_t x, const char *key)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", t->fe, key);
    xs_rm(t->xs, x, p);
}

static int write_queue_keys(struct tf *t, xs_transaction_t x, const char *dir, struct tf_queue *q)
{
    unsigned pages = 1u << t->o.order;
    if (t->o.order == 0 && !t->o.write_order) {
        uint32_t ref = t->o.bogus_ring_ref ? q->ring_refs[0] ^ 0x5a5a00u : q->ring_refs[0];
        if (wr(t, x, dir, PVK_RING_REF, "%u", ref) < 0)
            return -1;
    } else {
        for (unsigned i = 0; i < pages; i++) {
            char k[32];
            snprintf(k, sizeof(k), PVK_BLK_RING_REF_FMT, i);
            if (wr(t, x, dir, k, "%u", q->ring_refs[i]) < 0)
                return -1;
        }
    }
    return wr(t, x, dir, PVK_EVENT_CHANNEL, "%u", q->port);
}

/* One try of write_keys, in transaction x (xsu_txn reruns it on a conflict). */
static int write_keys_txn(struct xs_handle *xs, xs_transaction_t x, void *arg)
{
    struct tf *t = arg;
    (void)xs;
    static const char *const stale[] = {PVK_RING_REF,      PVK_BLK_RING_PAGE_ORDER,
                                        PVK_EVENT_CHANNEL, PVK_MQ_NUM_QUEUES,
                                        PVK_PROTOCOL,      "queue-0",
                                        "queue-1",         "queue-2",
                                        "queue-3"};
    for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++)
        rm_key(t, x, stale[i]);
    for (unsigned i = 0; i < (1u << TF_MAX_ORDER); i++) {
        char k[32];
        snprintf(k, sizeof(k), PVK_BLK_RING_REF_FMT, i);
        rm_key(t, x, k);
    }
    int r = 0;
    if (t->o.order > 0 || t->o.write_order)
        r |= wr(t, x, t->fe, PVK_BLK_RING_PAGE_ORDER, "%u", t->o.order);
    if (t->nq == 1) {
        r |= write_queue_keys(t, x, t->fe, &t->q[0]);
    } else {
        r |= wr(t, x, t->fe, PVK_MQ_NUM_QUEUES, "%u", t->nq);
        for (unsigned i = 0; i < t->nq; i++) {
            char dir[300];
            snprintf(dir, sizeof(dir), "%s/" PVK_QUEUE_FMT, t->fe, i);
            r |= write_queue_keys(t, x, dir, &t->q[i]);
        }
    }
    if (t->o.protocol)
        r |= wr(t, x, t->fe, PVK_PROTOCOL, "%s", t->o.protocol);
    r |= wr(t, x, t->fe, PVK_BLK_FEATURE_PERSISTENT, "%u", t->o.persistent ? 1u : 0u);
    return r ? -1 : 0;
}

static int write_keys(struct tf *t)
{
    const char *call;
    if (xsu_txn(t->xs, write_keys_txn, t, &call) < 0)
        return tferr(t, "%s %s: %s", call ? call : "writing", t->fe, strerror(errno));
    return 0;
}

int tf_connect(struct tf *t, const struct tf_opts *o)
{
    t->o = *o;
    if (!t->o.seg_count || t->o.seg_first + t->o.seg_count > 8)
        return tferr(t, "bad segment shape %u+%u", t->o.seg_first, t->o.seg_count);
    if (read_backend(t) < 0)
        return -1;
    /* A new connection starts from Initialising (a frontend left Closed by an
     * earlier one, or by a backend that went away, says so first). */
    if (tf_write_state(t, XenbusStateInitialising) < 0)
        return tferr(t, "writing %s/state: %s", t->fe, strerror(errno));
    if (tf_wait_state(t, t->be, 1u << XenbusStateInitWait, t->o.timeout_ms) < 0)
        return -1;
    if (read_features(t) < 0)
        return -1;
    t->nq = t->o.queues;
    if (t->nq == 0 || t->nq > TF_MAX_QUEUES)
        return tferr(t, "%u queues: not supported here", t->nq);
    for (unsigned i = 0; i < t->nq; i++)
        if (setup_queue(t, &t->q[i]) < 0)
            return -1;
    t->data = share(t, TF_DATA_PAGES, t->data_refs);
    t->ind = share(t, TF_IND_PAGES, t->ind_refs);
    if (!t->data || !t->ind)
        return tferr(t, "sharing data pages: %s", strerror(errno));
    if (write_keys(t) < 0 || tf_write_state(t, XenbusStateInitialised) < 0)
        return -1;
    int st = tf_wait_state(
        t, t->be, 1u << XenbusStateConnected | 1u << XenbusStateClosing | 1u << XenbusStateClosed,
        t->o.timeout_ms);
    if (st != XenbusStateConnected) {
        char *e = rd(t, t->be, PVK_ERROR);
        tferr(t, "backend went to state %d, not Connected (error: %s)", st, e ? e : "none");
        free(e);
        return -1;
    }
    if (tf_write_state(t, XenbusStateConnected) < 0)
        return tferr(t, "writing state: %s", strerror(errno));
    t->connected = true;
    return 0;
}

int tf_reconnect(struct tf *t)
{
    if (tf_write_state(t, XenbusStateInitialising) < 0)
        return tferr(t, "writing state: %s", strerror(errno));
    if (tf_wait_state(t, t->be, 1u << XenbusStateInitWait, t->o.timeout_ms) < 0)
        return -1;
    struct tf_opts o = t->o;
    tf_drop(t);
    return tf_connect(t, &o);
}

int tf_close(struct tf *t)
{
    if (tf_write_state(t, XenbusStateClosing) < 0)
        return tferr(t, "writing state: %s", strerror(errno));
    if (tf_wait_state(t, t->be, 1u << XenbusStateClosed, t->o.timeout_ms) < 0)
        return -1;
    tf_drop(t);
    return tf_write_state(t, XenbusStateClosed);
}

void tf_push(struct tf *t, unsigned qi, const blkif_request_t *req)
{
    struct tf_queue *q = &t->q[qi];
    *RING_GET_REQUEST(&q->fr, q->fr.req_prod_pvt) = *req;
    q->fr.req_prod_pvt++;
    int notify;
    RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&q->fr, notify);
    if (notify)
        xenevtchn_notify(t->xce, q->port);
}

/* Wait for any event (or timeout_ms); unmask what arrived. */
static void wait_event(struct tf *t, unsigned timeout_ms)
{
    struct pollfd p = {.fd = xenevtchn_fd(t->xce), .events = POLLIN};
    if (poll(&p, 1, (int)timeout_ms) > 0) {
        xenevtchn_port_or_error_t port;
        while ((port = xenevtchn_pending(t->xce)) >= 0) {
            xenevtchn_unmask(t->xce, (evtchn_port_t)port);
            p.revents = 0;
            if (poll(&p, 1, 0) <= 0)
                break;
        }
    }
}

int tf_next_response(struct tf *t, unsigned qi, unsigned timeout_ms, blkif_response_t *rsp)
{
    struct tf_queue *q = &t->q[qi];
    uint64_t end = now_ms() + timeout_ms;
    for (;;) {
        RING_IDX rp = __atomic_load_n(&q->fr.sring->rsp_prod, __ATOMIC_ACQUIRE);
        if (RING_RESPONSE_PROD_OVERFLOW(&q->fr, rp)) {
            tferr(t, "queue %u: backend's rsp_prod %u is past our requests", qi, rp);
            return -1;
        }
        if (q->fr.rsp_cons != rp) {
            RING_COPY_RESPONSE(&q->fr, q->fr.rsp_cons, rsp);
            q->fr.rsp_cons++;
            return 1;
        }
        int more;
        RING_FINAL_CHECK_FOR_RESPONSES(&q->fr, more);
        if (more)
            continue;
        uint64_t now = now_ms();
        if (now >= end)
            return 0;
        wait_event(t, (unsigned)(end - now > 100 ? 100 : end - now));
    }
}

int tf_roundtrip(struct tf *t, unsigned qi, blkif_request_t *req)
{
    req->id = t->next_id++;
    tf_push(t, qi, req);
    blkif_response_t rsp;
    int r = tf_next_response(t, qi, t->o.timeout_ms, &rsp);
    if (r <= 0) {
        if (r == 0)
            tferr(t, "no response to request id %#llx op %u within %u ms",
                  (unsigned long long)req->id, req->operation, t->o.timeout_ms);
        return -100;
    }
    if (rsp.id != req->id) {
        tferr(t, "response id %#llx, expected %#llx", (unsigned long long)rsp.id,
              (unsigned long long)req->id);
        return -100;
    }
    return rsp.status;
}

int tf_simple(struct tf *t, int op)
{
    blkif_request_t req = {.operation = (uint8_t)op, .nr_segments = 0};
    return tf_roundtrip(t, 0, &req);
}

int tf_discard(struct tf *t, uint64_t sector, uint64_t nsect)
{
    struct blkif_request_discard d;
    memset(&d, 0, sizeof(d));
    d.operation = BLKIF_OP_DISCARD;
    d.sector_number = sector;
    d.nr_sectors = nsect;
    blkif_request_t req;
    memset(&req, 0, sizeof(req));
    memcpy(&req, &d, sizeof(d));
    return tf_roundtrip(t, 0, &req);
}

/* ---- transfers through the page pool ---- */

struct pend {
    uint64_t id;
    unsigned qi, page0, nseg;
    uint64_t off; /* first sector, relative to the transfer */
    uint64_t nsect;
    bool done;
};

/* Sector k of a transfer lives in page (k / count), sector first + k % count. */
static unsigned char *sector_ptr(struct tf *t, unsigned page, unsigned k)
{
    return t->data + (size_t)page * TF_PAGE + (size_t)(t->o.seg_first + k) * TF_SECTOR;
}

static void copy_pages(struct tf *t, struct pend *p, unsigned char *buf, bool to_pages)
{
    unsigned cnt = t->o.seg_count;
    for (uint64_t k = 0; k < p->nsect; k++) {
        unsigned char *pg = sector_ptr(t, p->page0 + (unsigned)(k / cnt), (unsigned)(k % cnt));
        unsigned char *b = buf + (p->off + k) * TF_SECTOR;
        if (to_pages)
            memcpy(pg, b, TF_SECTOR);
        else
            memcpy(b, pg, TF_SECTOR);
    }
}

static void build(struct tf *t, int op, uint64_t sector, struct pend *p, unsigned ind_page)
{
    blkif_request_t req;
    memset(&req, 0, sizeof(req));
    unsigned cnt = t->o.seg_count;
    struct blkif_request_segment segs[TF_MAX_REQ_SEGS];
    for (unsigned i = 0; i < p->nseg; i++) {
        uint64_t left = p->nsect - (uint64_t)i * cnt;
        unsigned n = left < cnt ? (unsigned)left : cnt;
        segs[i].gref = t->data_refs[p->page0 + i];
        segs[i].first_sect = (uint8_t)t->o.seg_first;
        segs[i].last_sect = (uint8_t)(t->o.seg_first + n - 1);
    }
    if (p->nseg > BLKIF_MAX_SEGMENTS_PER_REQUEST) {
        struct blkif_request_indirect ir;
        memset(&ir, 0, sizeof(ir));
        ir.operation = BLKIF_OP_INDIRECT;
        ir.indirect_op = (uint8_t)op;
        ir.nr_segments = (uint16_t)p->nseg;
        ir.sector_number = sector + p->off;
        ir.indirect_grefs[0] = t->ind_refs[ind_page];
        ir.id = p->id;
        memcpy(t->ind + (size_t)ind_page * TF_PAGE, segs, p->nseg * sizeof(segs[0]));
        memcpy(&req, &ir, sizeof(ir));
    } else {
        req.operation = (uint8_t)op;
        req.nr_segments = (uint8_t)p->nseg;
        req.sector_number = sector + p->off;
        memcpy(req.seg, segs, p->nseg * sizeof(segs[0]));
        req.id = p->id;
    }
    tf_push(t, p->qi, &req);
}

static int collect(struct tf *t, struct pend *ps, unsigned n, int op, unsigned char *buf)
{
    unsigned left = n;
    uint64_t end = now_ms() + t->o.timeout_ms;
    while (left) {
        bool got = false;
        for (unsigned qi = 0; qi < t->nq && left; qi++) {
            blkif_response_t rsp;
            int r = tf_next_response(t, qi, 0, &rsp);
            if (r < 0)
                return -1;
            if (r == 0)
                continue;
            got = true;
            unsigned i;
            for (i = 0; i < n; i++)
                if (!ps[i].done && ps[i].id == rsp.id && ps[i].qi == qi)
                    break;
            if (i == n)
                return tferr(t, "response with unknown id %#llx on queue %u",
                             (unsigned long long)rsp.id, qi);
            if (rsp.status != BLKIF_RSP_OKAY)
                return tferr(t, "%s of %llu sectors at +%llu: status %d",
                             op == BLKIF_OP_READ ? "read" : "write",
                             (unsigned long long)ps[i].nsect, (unsigned long long)ps[i].off,
                             rsp.status);
            ps[i].done = true;
            left--;
            if (op == BLKIF_OP_READ)
                copy_pages(t, &ps[i], buf, false);
        }
        if (!got) {
            if (now_ms() >= end)
                return tferr(t, "%u of %u responses missing after %u ms", left, n, t->o.timeout_ms);
            wait_event(t, 50);
        }
    }
    return 0;
}

int tf_rw(struct tf *t, int op, uint64_t sector, uint64_t nsect, void *buf)
{
    if (!t->connected)
        return tferr(t, "not connected");
    unsigned cnt = t->o.seg_count;
    unsigned max_segs = BLKIF_MAX_SEGMENTS_PER_REQUEST;
    if (t->o.indirect && t->max_indirect > max_segs)
        max_segs = t->max_indirect < TF_MAX_REQ_SEGS ? t->max_indirect : TF_MAX_REQ_SEGS;
    static struct pend ps[TF_DATA_PAGES];
    uint64_t done = 0;
    while (done < nsect) {
        /* One wave: as many requests as pages, ring slots and indirect pages allow. */
        unsigned n = 0, page = 0, ind = 0, qi = 0;
        unsigned slots[TF_MAX_QUEUES];
        for (unsigned i = 0; i < t->nq; i++)
            slots[i] = RING_FREE_REQUESTS(&t->q[i].fr);
        while (done < nsect && page < TF_DATA_PAGES) {
            uint64_t segs_left = (nsect - done + cnt - 1) / cnt;
            unsigned nseg = segs_left < max_segs ? (unsigned)segs_left : max_segs;
            if (nseg > TF_DATA_PAGES - page)
                nseg = TF_DATA_PAGES - page;
            bool indirect = nseg > BLKIF_MAX_SEGMENTS_PER_REQUEST;
            if ((indirect && ind == TF_IND_PAGES) || !slots[qi])
                break;
            struct pend *p = &ps[n++];
            p->id = t->next_id++;
            p->qi = qi;
            p->page0 = page;
            p->nseg = nseg;
            p->off = done;
            p->nsect = (uint64_t)nseg * cnt < nsect - done ? (uint64_t)nseg * cnt : nsect - done;
            p->done = false;
            if (op == BLKIF_OP_WRITE)
                copy_pages(t, p, buf, true);
            build(t, op, sector, p, ind);
            slots[qi]--;
            if (indirect)
                ind++;
            page += nseg;
            done += p->nsect;
            qi = (qi + 1) % t->nq;
        }
        if (n == 0)
            return tferr(t, "no ring slot free");
        if (collect(t, ps, n, op, buf) < 0)
            return -1;
    }
    return 0;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void tf_pattern(void *buf, uint64_t sector, uint64_t nsect, uint64_t seed)
{
    uint64_t *w = buf;
    for (uint64_t s = 0; s < nsect; s++)
        for (unsigned i = 0; i < TF_SECTOR / 8; i++)
            w[s * (TF_SECTOR / 8) + i] = mix(seed * 0x100000001b3ull ^ mix(sector + s) ^ i);
}
