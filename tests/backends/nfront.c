/* nfront.c - the netif test frontend (see nfront.h). */
#define _GNU_SOURCE
#include "nfront.h"

#include "pv-keys.h"
#include "xs_txn.h"
#include "nframe.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xen/io/xenbus.h>

uint64_t nf_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int nferr(struct nf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int nferr(struct nf *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->err, sizeof(t->err), fmt, ap);
    va_end(ap);
    return -1;
}

void nf_default_opts(struct nf_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->queues = 1;
    o->sg = o->gso4 = o->gso6 = o->csum6 = true;
    o->rx_bufs = NF_RX_BUFS;
    o->timeout_ms = 20000;
}

static char *rd(struct nf *t, const char *dir, const char *key)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, key);
    unsigned len;
    return xs_read(t->xs, XBT_NULL, p, &len);
}

static unsigned rd_flag(struct nf *t, const char *dir, const char *key, unsigned dflt)
{
    char *v = rd(t, dir, key);
    if (!v)
        return dflt;
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    unsigned r = (*v && !*end && x < 1000) ? (unsigned)x : dflt;
    free(v);
    return r;
}

static int wr(struct nf *t, xs_transaction_t x, const char *dir, const char *key, const char *fmt,
              ...) __attribute__((format(printf, 5, 6)));
static int wr(struct nf *t, xs_transaction_t x, const char *dir, const char *key, const char *fmt,
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

struct nf *nf_open(const char *fe)
{
    struct nf *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    snprintf(t->fe, sizeof(t->fe), "%s", fe);
    nf_default_opts(&t->o);
    t->xs = xs_open(0);
    t->gs = xengntshr_open(NULL, 0);
    t->xce = xenevtchn_open(NULL, 0);
    if (!t->xs || !t->gs || !t->xce) {
        fprintf(stderr, "nfront: opening xenstore/gntshr/evtchn: %s\n", strerror(errno));
        nf_free(t);
        return NULL;
    }
    char *mac = rd(t, fe, PVK_NET_MAC);
    if (!mac || nfr_parse_mac(mac, t->mac) < 0)
        fprintf(stderr, "nfront: %s/mac missing or malformed\n", fe);
    free(mac);
    return t;
}

static void free_queue(struct nf *t, struct nf_queue *q)
{
    if (q->bound_tx)
        xenevtchn_unbind(t->xce, q->port_tx);
    if (q->bound_rx)
        xenevtchn_unbind(t->xce, q->port_rx);
    if (q->txs)
        xengntshr_unshare(t->gs, q->txs, 1);
    if (q->rxs)
        xengntshr_unshare(t->gs, q->rxs, 1);
    if (q->txpg)
        xengntshr_unshare(t->gs, q->txpg, NF_TX_PAGES);
    if (q->rxpg)
        xengntshr_unshare(t->gs, q->rxpg, t->o.rx_bufs);
    memset(q, 0, sizeof(*q));
}

void nf_drop(struct nf *t)
{
    for (unsigned i = 0; i < NF_MAX_QUEUES; i++)
        free_queue(t, &t->q[i]);
    t->nq = 0;
    t->connected = false;
    while (t->rx_count) {
        free(t->rxq[t->rx_head].data);
        t->rx_head = (t->rx_head + 1) % NF_RX_QUEUE;
        t->rx_count--;
    }
}

void nf_free(struct nf *t)
{
    if (!t)
        return;
    nf_drop(t);
    if (t->xce)
        xenevtchn_close(t->xce);
    if (t->gs)
        xengntshr_close(t->gs);
    if (t->xs)
        xs_close(t->xs);
    free(t);
}

int nf_write_state(struct nf *t, int state)
{
    return wr(t, XBT_NULL, t->fe, PVK_STATE, "%d", state);
}

int nf_wait_state(struct nf *t, const char *dir, unsigned mask, unsigned timeout_ms)
{
    uint64_t end = nf_now_ms() + timeout_ms;
    int last = -1;
    for (;;) {
        unsigned v = rd_flag(t, dir, PVK_STATE, 99);
        if (v < 32) {
            last = (int)v;
            if (mask & (1u << v))
                return (int)v;
        }
        if (nf_now_ms() >= end) {
            nferr(t, "%s/state is %d after %u ms (waiting for mask %#x)", dir, last, timeout_ms,
                  mask);
            return -1;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static int read_backend(struct nf *t)
{
    char *be = rd(t, t->fe, PVK_BACKEND);
    if (!be)
        return nferr(t, "%s: no backend", t->fe);
    snprintf(t->be, sizeof(t->be), "%s", be);
    free(be);
    t->be_domid = rd_flag(t, t->fe, PVK_BACKEND_ID, 0);
    return 0;
}

static void read_features(struct nf *t)
{
    t->max_queues = rd_flag(t, t->be, PVK_MQ_MAX_QUEUES, 1);
    t->be_sg = rd_flag(t, t->be, PVK_NET_FEATURE_SG, 0);
    t->be_gso4 = rd_flag(t, t->be, PVK_NET_FEATURE_GSO_TCPV4, 0);
    t->be_gso6 = rd_flag(t, t->be, PVK_NET_FEATURE_GSO_TCPV6, 0);
    t->be_mcast = rd_flag(t, t->be, PVK_NET_FEATURE_MCAST_CONTROL, 0);
    t->be_split = rd_flag(t, t->be, PVK_NET_FEATURE_SPLIT_EVTCHN, 0);
    t->be_csum6 = rd_flag(t, t->be, PVK_NET_FEATURE_IPV6_CSUM, 0);
}

static void post_rx(struct nf *t, struct nf_queue *q, uint16_t id)
{
    RING_IDX i = q->rx.req_prod_pvt++;
    netif_rx_request_t *r = RING_GET_REQUEST(&q->rx, i);
    r->id = id;
    r->gref = q->rxrefs[id];
    q->posted[i % 256] = id;
    (void)t;
}

static void push_rx(struct nf *t, struct nf_queue *q)
{
    int notify;
    RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&q->rx, notify);
    if (notify)
        xenevtchn_notify(t->xce, q->bound_rx ? q->port_rx : q->port_tx);
}

static int setup_queue(struct nf *t, struct nf_queue *q)
{
    q->txs = xengntshr_share_pages(t->gs, t->be_domid, 1, &q->tx_ref, 1);
    q->rxs = xengntshr_share_pages(t->gs, t->be_domid, 1, &q->rx_ref, 1);
    q->txpg = xengntshr_share_pages(t->gs, t->be_domid, NF_TX_PAGES, q->txrefs, 1);
    q->rxpg = xengntshr_share_pages(t->gs, t->be_domid, (int)t->o.rx_bufs, q->rxrefs, 1);
    if (!q->txs || !q->rxs || !q->txpg || !q->rxpg)
        return nferr(t, "sharing ring and buffer pages: %s", strerror(errno));
    netif_tx_sring_t *ts = q->txs;
    netif_rx_sring_t *rs = q->rxs;
    SHARED_RING_INIT(ts);
    FRONT_RING_INIT(&q->tx, ts, NF_PAGE);
    SHARED_RING_INIT(rs);
    FRONT_RING_INIT(&q->rx, rs, NF_PAGE);
    int p = xenevtchn_bind_unbound_port(t->xce, t->be_domid);
    if (p < 0)
        return nferr(t, "xenevtchn_bind_unbound_port(%u): %s", t->be_domid, strerror(errno));
    q->port_tx = (evtchn_port_t)p;
    q->bound_tx = true;
    if (t->o.split) {
        p = xenevtchn_bind_unbound_port(t->xce, t->be_domid);
        if (p < 0)
            return nferr(t, "xenevtchn_bind_unbound_port(%u): %s", t->be_domid, strerror(errno));
        q->port_rx = (evtchn_port_t)p;
        q->bound_rx = true;
    }
    for (unsigned i = 0; i < t->o.rx_bufs; i++)
        post_rx(t, q, (uint16_t)i);
    q->rx.sring->req_prod = q->rx.req_prod_pvt; /* published with the keys */
    return 0;
}

static int write_queue_keys(struct nf *t, xs_transaction_t x, const char *dir, struct nf_queue *q)
{
    uint32_t tref = t->o.bogus_ring_ref ? q->tx_ref ^ 0x5a5a00u : q->tx_ref;
    int r = wr(t, x, dir, PVK_NET_TX_RING_REF, "%u", tref);
    r |= wr(t, x, dir, PVK_NET_RX_RING_REF, "%u", q->rx_ref);
    if (t->o.split) {
        r |= wr(t, x, dir, PVK_NET_EVENT_CHANNEL_TX, "%u", q->port_tx);
        r |= wr(t, x, dir, PVK_NET_EVENT_CHANNEL_RX, "%u", q->port_rx);
    } else {
        r |= wr(t, x, dir, PVK_EVENT_CHANNEL, "%u", q->port_tx);
    }
    return r;
}

/* One try of write_keys, in transaction x (xsu_txn reruns it on a conflict). */
static int write_keys_txn(struct xs_handle *xs, xs_transaction_t x, void *arg)
{
    struct nf *t = arg;
    static const char *const stale[] = {PVK_NET_TX_RING_REF,
                                        PVK_NET_RX_RING_REF,
                                        PVK_EVENT_CHANNEL,
                                        PVK_NET_EVENT_CHANNEL_TX,
                                        PVK_NET_EVENT_CHANNEL_RX,
                                        PVK_MQ_NUM_QUEUES,
                                        "queue-0",
                                        "queue-1",
                                        "queue-2",
                                        "queue-3",
                                        "queue-4",
                                        PVK_NET_REQUEST_RX_COPY,
                                        PVK_NET_FEATURE_RX_NOTIFY,
                                        PVK_NET_REQUEST_MCAST_CONTROL};
    for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", t->fe, stale[i]);
        xs_rm(xs, x, p);
    }
    int r = 0;
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
    if (!t->o.no_rx_copy)
        r |= wr(t, x, t->fe, PVK_NET_REQUEST_RX_COPY, "1");
    if (!t->o.no_rx_notify)
        r |= wr(t, x, t->fe, PVK_NET_FEATURE_RX_NOTIFY, "1");
    r |= wr(t, x, t->fe, PVK_NET_FEATURE_SG, "%d", t->o.sg);
    r |= wr(t, x, t->fe, PVK_NET_FEATURE_GSO_TCPV4, "%d", t->o.gso4);
    r |= wr(t, x, t->fe, PVK_NET_FEATURE_GSO_TCPV6, "%d", t->o.gso6);
    r |= wr(t, x, t->fe, PVK_NET_FEATURE_IPV6_CSUM, "%d", t->o.csum6);
    r |= wr(t, x, t->fe, PVK_NET_FEATURE_NO_CSUM_OFFLOAD, "%d", t->o.no_csum);
    if (t->o.mcast_ctrl)
        r |= wr(t, x, t->fe, PVK_NET_REQUEST_MCAST_CONTROL, "1");
    return r ? -1 : 0;
}

static int write_keys(struct nf *t)
{
    const char *call;
    if (xsu_txn(t->xs, write_keys_txn, t, &call) < 0)
        return nferr(t, "%s %s: %s", call ? call : "writing", t->fe, strerror(errno));
    return 0;
}

int nf_connect(struct nf *t, const struct nf_opts *o)
{
    t->o = *o;
    t->keys_tampered = false; /* write_keys writes every feature again */
    if (t->o.rx_bufs == 0 || t->o.rx_bufs > NF_RX_BUFS)
        return nferr(t, "%u rx buffers: 1..%u", t->o.rx_bufs, NF_RX_BUFS);
    if (read_backend(t) < 0)
        return -1;
    if (nf_write_state(t, XenbusStateInitialising) < 0)
        return nferr(t, "writing %s/state: %s", t->fe, strerror(errno));
    if (nf_wait_state(t, t->be, 1u << XenbusStateInitWait, t->o.timeout_ms) < 0)
        return -1;
    read_features(t);
    t->nq = t->o.queues;
    if (t->nq == 0 || t->nq > NF_MAX_QUEUES)
        return nferr(t, "%u queues: not supported here", t->nq);
    for (unsigned i = 0; i < t->nq; i++)
        if (setup_queue(t, &t->q[i]) < 0)
            return -1;
    /* As Linux netfront: keys, then straight to Connected. */
    if (write_keys(t) < 0 || nf_write_state(t, XenbusStateConnected) < 0)
        return -1;
    int st = nf_wait_state(
        t, t->be, 1u << XenbusStateConnected | 1u << XenbusStateClosing | 1u << XenbusStateClosed,
        t->o.timeout_ms);
    if (st != XenbusStateConnected) {
        char *e = rd(t, t->be, PVK_ERROR);
        nferr(t, "backend went to state %d, not Connected (error: %s)", st, e ? e : "none");
        free(e);
        return -1;
    }
    for (unsigned i = 0; i < t->nq; i++)
        push_rx(t, &t->q[i]);
    t->connected = true;
    return 0;
}

int nf_reconnect(struct nf *t)
{
    if (nf_write_state(t, XenbusStateInitialising) < 0)
        return nferr(t, "writing state: %s", strerror(errno));
    if (nf_wait_state(t, t->be, 1u << XenbusStateInitWait, t->o.timeout_ms) < 0)
        return -1;
    struct nf_opts o = t->o;
    nf_drop(t);
    return nf_connect(t, &o);
}

int nf_close(struct nf *t)
{
    if (nf_write_state(t, XenbusStateClosing) < 0)
        return nferr(t, "writing state: %s", strerror(errno));
    if (nf_wait_state(t, t->be, 1u << XenbusStateClosed, t->o.timeout_ms) < 0)
        return -1;
    nf_drop(t);
    return nf_write_state(t, XenbusStateClosed);
}

void nf_wait_event(struct nf *t, unsigned ms)
{
    struct pollfd p = {.fd = xenevtchn_fd(t->xce), .events = POLLIN};
    if (poll(&p, 1, (int)ms) <= 0)
        return;
    xenevtchn_port_or_error_t port;
    while ((port = xenevtchn_pending(t->xce)) >= 0) {
        xenevtchn_unmask(t->xce, (evtchn_port_t)port);
        p.revents = 0;
        if (poll(&p, 1, 0) <= 0)
            break;
    }
}

void nf_notify_tx(struct nf *t, unsigned qi)
{
    xenevtchn_notify(t->xce, t->q[qi].port_tx);
}

/* ---- tx ---- */

uint8_t *nf_txpage(struct nf *t, unsigned qi, unsigned i)
{
    return t->q[qi].txpg + (size_t)i * NF_PAGE;
}

static void count_status(struct nf *t, int16_t st)
{
    if (st == NETIF_RSP_OKAY)
        t->txs.ok++;
    else if (st == NETIF_RSP_ERROR)
        t->txs.error++;
    else if (st == NETIF_RSP_DROPPED)
        t->txs.dropped++;
    else if (st == NETIF_RSP_NULL)
        t->txs.null++;
    else
        t->txs.other++;
}

int nf_tx_reap(struct nf *t, unsigned qi)
{
    struct nf_queue *q = &t->q[qi];
    int seen = 0;
    for (;;) {
        RING_IDX rp = __atomic_load_n(&q->tx.sring->rsp_prod, __ATOMIC_ACQUIRE);
        if (RING_RESPONSE_PROD_OVERFLOW(&q->tx, rp))
            return nferr(t, "queue %u: tx rsp_prod %u is past our requests", qi, rp);
        while (q->tx.rsp_cons != rp) {
            netif_tx_response_t r;
            RING_COPY_RESPONSE(&q->tx, q->tx.rsp_cons, &r);
            q->tx.rsp_cons++;
            seen++;
            count_status(t, r.status);
            if (r.status == NETIF_RSP_NULL)
                continue;
            if (r.id >= NF_TX_PAGES || !q->txbusy[r.id])
                return nferr(t, "queue %u: tx response with unknown id %u (status %d)", qi, r.id,
                             r.status);
            q->txbusy[r.id] = false;
            t->last_status = r.status;
        }
        int more;
        RING_FINAL_CHECK_FOR_RESPONSES(&q->tx, more);
        if (!more)
            return seen;
    }
}

int nf_collect(struct nf *t, unsigned qi, unsigned n, unsigned timeout_ms, netif_tx_response_t *out)
{
    struct nf_queue *q = &t->q[qi];
    uint64_t end = nf_now_ms() + timeout_ms;
    unsigned got = 0;
    while (got < n) {
        RING_IDX rp = __atomic_load_n(&q->tx.sring->rsp_prod, __ATOMIC_ACQUIRE);
        if (RING_RESPONSE_PROD_OVERFLOW(&q->tx, rp))
            return nferr(t, "queue %u: tx rsp_prod %u is past our requests", qi, rp);
        while (q->tx.rsp_cons != rp && got < n) {
            netif_tx_response_t *r = &out[got++];
            RING_COPY_RESPONSE(&q->tx, q->tx.rsp_cons, r);
            q->tx.rsp_cons++;
            count_status(t, r->status);
            if (r->status != NETIF_RSP_NULL && r->id < NF_TX_PAGES)
                q->txbusy[r->id] = false;
        }
        if (got == n)
            break;
        int more;
        RING_FINAL_CHECK_FOR_RESPONSES(&q->tx, more);
        if (more)
            continue;
        if (nf_now_ms() >= end)
            return nferr(t, "queue %u: %u of %u tx responses after %u ms", qi, got, n, timeout_ms);
        nf_wait_event(t, 20);
    }
    return 0;
}

static unsigned busy_pages(const struct nf_queue *q)
{
    unsigned n = 0;
    for (unsigned i = 0; i < NF_TX_PAGES; i++)
        n += q->txbusy[i];
    return n;
}

static int free_page(struct nf_queue *q, unsigned from)
{
    for (unsigned k = 0; k < NF_TX_PAGES; k++) {
        unsigned i = (from + k) % NF_TX_PAGES;
        if (!q->txbusy[i])
            return (int)i;
    }
    return -1;
}

int nf_send(struct nf *t, unsigned qi, const uint8_t *frame, unsigned len,
            const struct nf_slot *slots, unsigned nslots, uint16_t flags,
            const netif_extra_info_t *extras, unsigned nextras)
{
    struct nf_queue *q = &t->q[qi];
    struct nf_slot one = {0, (uint16_t)len};
    if (!slots) {
        slots = &one;
        nslots = 1;
    }
    if (nslots == 0 || nslots > NF_TX_PAGES / 2 || nextras > 4)
        return nferr(t, "%u slots, %u extras: not supported here", nslots, nextras);
    uint64_t end = nf_now_ms() + t->o.timeout_ms;
    while (NF_TX_PAGES - busy_pages(q) < nslots || RING_FREE_REQUESTS(&q->tx) < nslots + nextras) {
        if (nf_tx_reap(t, qi) < 0)
            return -1;
        if (NF_TX_PAGES - busy_pages(q) >= nslots && RING_FREE_REQUESTS(&q->tx) >= nslots + nextras)
            break;
        if (nf_now_ms() >= end)
            return nferr(t, "queue %u: no tx responses for %u ms (%u slots in flight)", qi,
                         t->o.timeout_ms, busy_pages(q));
        nf_wait_event(t, 20);
    }
    unsigned pos = 0, from = 0;
    for (unsigned k = 0; k < nslots; k++) {
        int pg = free_page(q, from);
        from = (unsigned)pg + 1;
        uint8_t *dst = nf_txpage(t, qi, (unsigned)pg) + slots[k].off;
        unsigned n = slots[k].len;
        if (pos + n > len || slots[k].off + n > NF_PAGE)
            return nferr(t, "slot %u (%u+%u) does not fit", k, slots[k].off, n);
        memcpy(dst, frame + pos, n);
        pos += n;
        q->txbusy[pg] = true;
        netif_tx_request_t *r = RING_GET_REQUEST(&q->tx, q->tx.req_prod_pvt++);
        r->gref = q->txrefs[pg];
        r->offset = slots[k].off;
        r->id = (uint16_t)pg;
        r->size = (uint16_t)(k == 0 ? len : n);
        r->flags = (uint16_t)((k == 0 ? flags : 0) | (k + 1 < nslots ? NETTXF_more_data : 0) |
                              (k == 0 && nextras ? NETTXF_extra_info : 0));
        for (unsigned e = 0; k == 0 && e < nextras; e++) {
            netif_extra_info_t x = extras[e];
            x.flags = e + 1 < nextras ? XEN_NETIF_EXTRA_FLAG_MORE : 0;
            memcpy(RING_GET_REQUEST(&q->tx, q->tx.req_prod_pvt++), &x, sizeof(x));
        }
    }
    if (pos != len)
        return nferr(t, "slots hold %u of %u bytes", pos, len);
    int notify;
    RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&q->tx, notify);
    if (notify)
        xenevtchn_notify(t->xce, q->port_tx);
    return 0;
}

void nf_push_raw(struct nf *t, unsigned qi, const netif_tx_request_t *reqs, unsigned n)
{
    struct nf_queue *q = &t->q[qi];
    for (unsigned i = 0; i < n; i++) {
        if (reqs[i].id < NF_TX_PAGES)
            q->txbusy[reqs[i].id] = true;
        *RING_GET_REQUEST(&q->tx, q->tx.req_prod_pvt++) = reqs[i];
    }
    int notify;
    RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&q->tx, notify);
    if (notify)
        xenevtchn_notify(t->xce, q->port_tx);
}

int nf_tx_drain(struct nf *t, unsigned timeout_ms)
{
    uint64_t end = nf_now_ms() + timeout_ms;
    for (;;) {
        unsigned busy = 0;
        for (unsigned i = 0; i < t->nq; i++) {
            if (nf_tx_reap(t, i) < 0)
                return -1;
            busy += t->q[i].tx.req_prod_pvt - t->q[i].tx.rsp_cons;
        }
        if (!busy)
            return 0;
        if (nf_now_ms() >= end)
            return nferr(t, "%u tx slots unanswered after %u ms", busy, timeout_ms);
        nf_wait_event(t, 20);
    }
}

int nf_mcast(struct nf *t, bool add, const uint8_t mac[6])
{
    struct nf_queue *q = &t->q[0];
    if (nf_tx_drain(t, t->o.timeout_ms) < 0)
        return -100;
    int pg = free_page(q, 0);
    if (pg < 0) {
        nferr(t, "no free tx page");
        return -100;
    }
    netif_tx_request_t r[2];
    memset(r, 0, sizeof(r));
    r[0].gref = q->txrefs[pg];
    r[0].id = (uint16_t)pg;
    r[0].flags = NETTXF_extra_info;
    netif_extra_info_t x;
    memset(&x, 0, sizeof(x));
    x.type = add ? XEN_NETIF_EXTRA_TYPE_MCAST_ADD : XEN_NETIF_EXTRA_TYPE_MCAST_DEL;
    memcpy(x.u.mcast.addr, mac, 6);
    memcpy(&r[1], &x, sizeof(x));
    /* Not nf_push_raw: it would take the extra slot's bytes for a page id. */
    q->txbusy[pg] = true;
    for (unsigned i = 0; i < 2; i++)
        *RING_GET_REQUEST(&q->tx, q->tx.req_prod_pvt++) = r[i];
    int notify;
    RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&q->tx, notify);
    if (notify)
        xenevtchn_notify(t->xce, q->port_tx);
    if (nf_tx_drain(t, t->o.timeout_ms) < 0)
        return -100;
    return t->last_status;
}

/* ---- rx ---- */

static void queue_pkt(struct nf *t, struct nf_pkt *p)
{
    if (t->rx_count == NF_RX_QUEUE) {
        free(p->data);
        t->rx_dropped++;
        return;
    }
    t->rxq[(t->rx_head + t->rx_count) % NF_RX_QUEUE] = *p;
    t->rx_count++;
}

/* One packet at rsp_cons if all its responses are there: 1 done, 0 not yet, -1 broken. */
static int rx_packet(struct nf *t, unsigned qi, RING_IDX rp)
{
    struct nf_queue *q = &t->q[qi];
    RING_IDX i = q->rx.rsp_cons;
    struct nf_pkt p;
    memset(&p, 0, sizeof(p));
    p.queue = qi;
    p.data = malloc(NF_MAX_PKT);
    if (!p.data)
        return nferr(t, "out of memory");
    bool more = true, extra = false, err = false;
    unsigned k = 0;
    /* netif.h: the extra-info slots follow the first slot whether or not it
     * has NETRXF_more_data (a one-page GSO frame is one data slot + extra). */
    while (more || extra) {
        if (i == rp) {
            free(p.data);
            return 0;
        }
        netif_rx_response_t r;
        RING_COPY_RESPONSE(&q->rx, i, &r);
        if (extra) { /* an extra-info slot, right after the first */
            netif_extra_info_t x;
            memcpy(&x, &r, sizeof(x));
            if (x.type == XEN_NETIF_EXTRA_TYPE_GSO) {
                /* netif.h: rx GSO only where the frontend set feature-sg
                 * and feature-gso-tcpv4/-tcpv6 for this connection. */
                bool v4 = x.u.gso.type == XEN_NETIF_GSO_TYPE_TCPV4;
                bool v6 = x.u.gso.type == XEN_NETIF_GSO_TYPE_TCPV6;
                if (!t->keys_tampered && !(t->o.sg && ((v4 && t->o.gso4) || (v6 && t->o.gso6)))) {
                    free(p.data);
                    return nferr(t,
                                 "queue %u: rx GSO extra (type %u) in slot %u that this "
                                 "connection did not negotiate (sg %d, gso v4 %d, v6 %d)",
                                 qi, x.u.gso.type, i, t->o.sg, t->o.gso4, t->o.gso6);
                }
                p.gso_type = x.u.gso.type;
                p.gso_size = x.u.gso.size;
            } else {
                free(p.data);
                return nferr(t, "queue %u: rx extra-info of unknown type %u", qi, x.type);
            }
            extra = x.flags & XEN_NETIF_EXTRA_FLAG_MORE;
            i++;
            continue;
        }
        if (r.id != q->posted[i % 256]) {
            free(p.data);
            /* The slots around it, raw, for whoever meets this next. */
            char around[160] = "";
            size_t n = 0;
            for (RING_IDX j = i >= 2 ? i - 2 : 0; j != i + 2 && j != rp && n < sizeof(around) - 40;
                 j++) {
                netif_rx_response_t a;
                RING_COPY_RESPONSE(&q->rx, j, &a);
                n += (size_t)snprintf(around + n, sizeof(around) - n,
                                      " [%u] id %u off %u fl %#x st %d", j, a.id, a.offset, a.flags,
                                      a.status);
            }
            return nferr(t,
                         "queue %u: rx response in slot %u has id %u, posted %u (packet from slot "
                         "%u, its slot %u; rsp_prod %u; rx ring ref %u; sg %d gso %d/%d;%s)",
                         qi, i, r.id, q->posted[i % 256], q->rx.rsp_cons, k, rp, q->rx_ref, t->o.sg,
                         t->o.gso4, t->o.gso6, around);
        }
        if (k == 0) {
            p.flags = r.flags;
            extra = r.flags & NETRXF_extra_info;
        }
        if (r.status < 0) {
            err = true;
        } else if (r.offset + (unsigned)r.status > NF_PAGE ||
                   p.len + (unsigned)r.status > NF_MAX_PKT) {
            free(p.data);
            return nferr(t, "queue %u: rx response offset %u size %d beyond its page", qi, r.offset,
                         r.status);
        } else {
            memcpy(p.data + p.len, q->rxpg + (size_t)r.id * NF_PAGE + r.offset, (size_t)r.status);
            p.len += (unsigned)r.status;
        }
        more = r.flags & NETRXF_more_data;
        k++;
        i++;
        if (k > 64) {
            free(p.data);
            return nferr(t, "queue %u: rx packet over more than 64 slots", qi);
        }
    }
    p.slots = i - q->rx.rsp_cons;
    for (RING_IDX j = q->rx.rsp_cons; j != i; j++)
        post_rx(t, q, q->posted[j % 256]);
    q->rx.rsp_cons = i;
    if (err) {
        t->rx_errors++;
        free(p.data);
    } else {
        queue_pkt(t, &p);
    }
    return 1;
}

static int rx_poll(struct nf *t, unsigned qi)
{
    struct nf_queue *q = &t->q[qi];
    bool any = false;
    for (;;) {
        RING_IDX rp = __atomic_load_n(&q->rx.sring->rsp_prod, __ATOMIC_ACQUIRE);
        if (RING_RESPONSE_PROD_OVERFLOW(&q->rx, rp))
            return nferr(t, "queue %u: rx rsp_prod %u is past our requests", qi, rp);
        int r;
        while ((r = rx_packet(t, qi, rp)) == 1)
            any = true;
        if (r < 0)
            return -1;
        int more;
        RING_FINAL_CHECK_FOR_RESPONSES(&q->rx, more);
        if (!more || q->rx.rsp_cons == rp)
            break;
    }
    if (any)
        push_rx(t, q);
    return 0;
}

int nf_poll(struct nf *t)
{
    for (unsigned i = 0; i < t->nq; i++)
        if (rx_poll(t, i) < 0 || nf_tx_reap(t, i) < 0)
            return -1;
    return 0;
}

int nf_poll_rx(struct nf *t)
{
    for (unsigned i = 0; i < t->nq; i++)
        if (rx_poll(t, i) < 0)
            return -1;
    return 0;
}

int nf_take(struct nf *t, struct nf_pkt *p)
{
    if (!t->rx_count)
        return 0;
    *p = t->rxq[t->rx_head];
    t->rx_head = (t->rx_head + 1) % NF_RX_QUEUE;
    t->rx_count--;
    return 1;
}

int nf_recv(struct nf *t, struct nf_pkt *p, unsigned timeout_ms)
{
    uint64_t end = nf_now_ms() + timeout_ms;
    for (;;) {
        if (nf_poll(t) < 0)
            return -1;
        if (nf_take(t, p))
            return 1;
        uint64_t now = nf_now_ms();
        if (now >= end)
            return 0;
        nf_wait_event(t, (unsigned)(end - now > 50 ? 50 : end - now));
    }
}
