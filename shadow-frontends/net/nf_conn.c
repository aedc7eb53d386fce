/* nf_conn.c - rings, grants and the netif protocol of one connection. */
#define _GNU_SOURCE
#include "nf_conn.h"

#include "net_l4.h"
#include "sf_validate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Responses consumed per call, each ring: the loop stays responsive. */
#define HARVEST_MAX (2u * NF_RING_SIZE)

static void post_rx(struct nf_conn *c)
{
    RING_IDX i = c->rx.req_prod_pvt;
    /* The buffer for ring slot i is page i % NF_RX_BUFS: the response in
     * slot i - NF_RX_BUFS, which used it, has been consumed. */
    netif_rx_request_t *req = RING_GET_REQUEST(&c->rx, i);
    req->id = (uint16_t)(i % NF_RX_BUFS);
    req->gref = c->rxref[i % NF_RX_BUFS];
    c->rx.req_prod_pvt = i + 1;
}

int nf_conn_setup(struct nf_conn *c, xengntshr_handle *gs, xenevtchn_handle *xce, uint32_t domid)
{
    memset(c, 0, offsetof(struct nf_conn, rxbuf));
    c->gs = gs;
    c->xce = xce;
    c->domid = domid;
    c->txs = xengntshr_share_pages(gs, domid, 1, &c->tx_ref, 1);
    if (!c->txs)
        goto fail;
    c->rxs = xengntshr_share_pages(gs, domid, 1, &c->rx_ref, 1);
    if (!c->rxs)
        goto fail;
    c->txpg = xengntshr_share_pages(gs, domid, NF_TX_PAGES, c->txref, 0);
    if (!c->txpg)
        goto fail;
    c->rxpg = xengntshr_share_pages(gs, domid, NF_RX_BUFS, c->rxref, 1);
    if (!c->rxpg)
        goto fail;
    memset(c->txs, 0, NF_PAGE);
    memset(c->rxs, 0, NF_PAGE);
    netif_tx_sring_t *ts = c->txs;
    netif_rx_sring_t *rs = c->rxs;
    SHARED_RING_INIT(ts);
    SHARED_RING_INIT(rs);
    FRONT_RING_INIT(&c->tx, ts, NF_PAGE);
    FRONT_RING_INIT(&c->rx, rs, NF_PAGE);
    for (unsigned i = NF_TX_PAGES; i-- > 0;)
        c->txfree[c->ntxfree++] = (uint16_t)i;
    for (unsigned i = 0; i < NF_RX_BUFS; i++)
        post_rx(c);
    /* requests /then/ the producer index (backends read it after connecting) */
    RING_PUSH_REQUESTS(&c->rx);
    xenevtchn_port_or_error_t port = xenevtchn_bind_unbound_port(xce, domid);
    if (port < 0)
        goto fail;
    c->port = (evtchn_port_t)port;
    c->bound = true;
    return 0;
fail:;
    int e = errno;
    nf_conn_teardown(c);
    errno = e;
    return -1;
}

void nf_conn_unbind(struct nf_conn *c)
{
    if (c && c->bound)
        xenevtchn_unbind(c->xce, c->port);
    if (c)
        c->bound = false;
}

bool nf_conn_release_step(struct nf_conn *c)
{
    nf_conn_unbind(c);
    if (c->rxpg) {
        xengntshr_unshare(c->gs, c->rxpg, NF_RX_BUFS);
        c->rxpg = NULL;
    } else if (c->txpg) {
        xengntshr_unshare(c->gs, c->txpg, NF_TX_PAGES);
        c->txpg = NULL;
    } else if (c->rxs) {
        xengntshr_unshare(c->gs, c->rxs, 1);
        c->rxs = NULL;
    } else if (c->txs) {
        xengntshr_unshare(c->gs, c->txs, 1);
        c->txs = NULL;
    }
    return c->rxpg || c->txpg || c->rxs || c->txs;
}

void nf_conn_teardown(struct nf_conn *c)
{
    if (!c)
        return;
    while (nf_conn_release_step(c))
        ;
}

bool nf_conn_tx_room(const struct nf_conn *c, unsigned nslots, unsigned extras)
{
    return c->ntxfree >= nslots && RING_FREE_REQUESTS(&c->tx) >= nslots + extras;
}

static uint16_t take_page(struct nf_conn *c, uint64_t now)
{
    uint16_t id = c->txfree[--c->ntxfree];
    c->txbusy[id] = true;
    c->txsince[id] = now;
    return id;
}

/* Is every page of the packet still in flight for it? */
static bool pkt_outstanding(const struct nf_conn *c, const struct nf_txpkt *p)
{
    for (unsigned k = 0; k < p->nslots; k++)
        if (!c->txbusy[p->ids[k]] || c->txowner[p->ids[k]] != p->seq)
            return false;
    return true;
}

static bool pkt_any_outstanding(const struct nf_conn *c, const struct nf_txpkt *p)
{
    for (unsigned k = 0; k < p->nslots; k++)
        if (c->txbusy[p->ids[k]] && c->txowner[p->ids[k]] == p->seq)
            return true;
    return false;
}

/* Retire the packets at the head that are answered. */
static void txq_retire(struct nf_conn *c)
{
    while (c->txq_n && !pkt_any_outstanding(c, &c->txq[c->txq_head])) {
        c->txq_head = (c->txq_head + 1) % NF_TX_PAGES;
        c->txq_n--;
    }
}

void nf_conn_unanswered(struct nf_conn *c,
                        uint8_t *(*fn)(void *arg, const struct virtio_net_hdr *vh, unsigned len),
                        void *arg)
{
    for (unsigned i = 0; i < c->txq_n; i++) {
        const struct nf_txpkt *p = &c->txq[(c->txq_head + i) % NF_TX_PAGES];
        if (!pkt_outstanding(c, p))
            continue;
        uint8_t *frame = fn(arg, &p->vh, p->len);
        if (!frame)
            continue;
        unsigned off = 0;
        for (unsigned k = 0; k < p->nslots; k++) {
            unsigned chunk = p->len - off < NF_PAGE ? p->len - off : NF_PAGE;
            memcpy(frame + off, c->txpg + (size_t)p->ids[k] * NF_PAGE, chunk);
            off += chunk;
        }
    }
}

/* The shadow's record of a packet about to be issued, for its replay. */
static struct nf_txpkt *txq_add(struct nf_conn *c, const struct virtio_net_hdr *vh, unsigned len,
                                unsigned nslots)
{
    txq_retire(c);
    /* An old packet still unanswered behind answered ones may keep the queue
     * full: it is no longer tracked (not replayed), the rest are. */
    while (c->txq_n == NF_TX_PAGES) {
        c->txq_head = (c->txq_head + 1) % NF_TX_PAGES;
        c->txq_n--;
    }
    struct nf_txpkt *p = &c->txq[(c->txq_head + c->txq_n++) % NF_TX_PAGES];
    p->seq = ++c->tx_seq;
    p->vh = *vh;
    p->len = (uint16_t)len;
    p->nslots = (uint8_t)nslots;
    return p;
}

void nf_conn_tx_frame(struct nf_conn *c, const uint8_t *frame, unsigned len, uint16_t flags,
                      const netif_extra_info_t *gso, const struct virtio_net_hdr *vh, uint64_t now)
{
    unsigned n = (len + NF_PAGE - 1) / NF_PAGE, off = 0;
    struct nf_txpkt *p = c->track ? txq_add(c, vh, len, n) : NULL;
    for (unsigned k = 0; k < n; k++) {
        uint16_t id = take_page(c, now);
        c->txowner[id] = p ? p->seq : 0;
        if (p)
            p->ids[k] = id;
        unsigned chunk = len - off < NF_PAGE ? len - off : NF_PAGE;
        memcpy(c->txpg + (size_t)id * NF_PAGE, frame + off, chunk);
        netif_tx_request_t *req = RING_GET_REQUEST(&c->tx, c->tx.req_prod_pvt);
        req->gref = c->txref[id];
        req->offset = 0;
        req->flags = k + 1 < n ? NETTXF_more_data : 0;
        if (k == 0)
            req->flags |= flags | (gso ? NETTXF_extra_info : 0);
        req->id = id;
        req->size = (uint16_t)(k == 0 ? len : chunk); /* the first slot carries the total */
        c->tx.req_prod_pvt++;
        off += chunk;
        if (k == 0 && gso) { /* the extra-info slot follows the first */
            netif_extra_info_t *e =
                (netif_extra_info_t *)RING_GET_REQUEST(&c->tx, c->tx.req_prod_pvt);
            memset(e, 0, sizeof(netif_tx_request_t));
            memcpy(e, gso, sizeof(*gso));
            e->flags = 0;
            c->tx.req_prod_pvt++;
            c->tx_nulls++;
        }
    }
}

/* A dummy request carrying one extra-info slot (netif.h: how a multicast
 * list operation is sent); its data is never read. Its id. */
static uint16_t tx_extra_only(struct nf_conn *c, uint8_t type, const uint8_t addr[6], uint64_t now)
{
    uint16_t id = take_page(c, now);
    c->txowner[id] = 0; /* not a packet: never replayed */
    memset(c->txpg + (size_t)id * NF_PAGE, 0, NET_ETH_HLEN);
    netif_tx_request_t *req = RING_GET_REQUEST(&c->tx, c->tx.req_prod_pvt);
    req->gref = c->txref[id];
    req->offset = 0;
    req->flags = NETTXF_extra_info;
    req->id = id;
    req->size = NET_ETH_HLEN;
    c->tx.req_prod_pvt++;
    netif_extra_info_t *e = (netif_extra_info_t *)RING_GET_REQUEST(&c->tx, c->tx.req_prod_pvt);
    memset(e, 0, sizeof(netif_tx_request_t));
    e->type = type;
    e->flags = 0;
    memcpy(e->u.mcast.addr, addr, 6);
    c->tx.req_prod_pvt++;
    c->tx_nulls++;
    return id;
}

void nf_conn_tx_mcast(struct nf_conn *c, uint8_t type, const uint8_t addr[6], uint64_t now)
{
    uint16_t id = tx_extra_only(c, type, addr, now);
    c->txmc[id] = true;
    c->tx_mcast_pending++;
}

bool nf_conn_tx_idle(const struct nf_conn *c)
{
    return c->ntxfree == NF_TX_PAGES && !c->tx_nulls;
}

bool nf_conn_tx_probe(struct nf_conn *c, const uint8_t addr[6], uint64_t now)
{
    /* Only on an idle ring: never two at once, never beside real traffic. */
    if (!nf_conn_tx_idle(c) || !nf_conn_tx_room(c, 1, 1))
        return false;
    c->probe_id = tx_extra_only(c, XEN_NETIF_EXTRA_TYPE_MCAST_DEL, addr, now);
    c->probe_out = true;
    c->probes++;
    return true;
}

void nf_conn_push(struct nf_conn *c)
{
    int ntx, nrx;
    /* requests /then/ producer index /then/ read req_event (in the macros) */
    RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&c->tx, ntx);
    RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&c->rx, nrx);
    if (ntx || nrx)
        xenevtchn_notify(c->xce, c->port);
}

void nf_conn_ack_event(xenevtchn_handle *xce)
{
    xenevtchn_port_or_error_t p = xenevtchn_pending(xce);
    if (p >= 0)
        xenevtchn_unmask(xce, (evtchn_port_t)p);
}

void nf_conn_rx_drop_partial(struct nf_conn *c)
{
    if (c->rx_slots)
        c->rx_bad = true;
}

static int harvest_tx(struct nf_conn *c, char *why, size_t len, bool *more)
{
    RING_IDX prod = __atomic_load_n(&c->tx.sring->rsp_prod, __ATOMIC_ACQUIRE);
    if (!sfv_ring_prod_ok(prod, c->tx.rsp_cons, c->tx.req_prod_pvt, RING_SIZE(&c->tx))) {
        snprintf(why, len, "tx rsp_prod %u with %u requests outstanding", prod,
                 c->tx.req_prod_pvt - c->tx.rsp_cons);
        return -1;
    }
    unsigned n = 0;
    while (c->tx.rsp_cons != prod && n++ < HARVEST_MAX) {
        netif_tx_response_t rsp;
        /* producer index (acquire above) /then/ the response */
        RING_COPY_RESPONSE(&c->tx, c->tx.rsp_cons, &rsp);
        c->tx.rsp_cons++;
        if (rsp.status == NETIF_RSP_NULL) {
            if (!c->tx_nulls) {
                snprintf(why, len, "tx response NULL with no extra-info slot outstanding");
                return -1;
            }
            c->tx_nulls--;
            continue;
        }
        if (rsp.id >= NF_TX_PAGES || !c->txbusy[rsp.id]) {
            snprintf(why, len, "unknown-id tx id=%u status=%d", rsp.id, rsp.status);
            return -1;
        }
        if (rsp.status != NETIF_RSP_OKAY && rsp.status != NETIF_RSP_ERROR &&
            rsp.status != NETIF_RSP_DROPPED) {
            snprintf(why, len, "bad-status tx id=%u status=%d", rsp.id, rsp.status);
            return -1;
        }
        c->txbusy[rsp.id] = false;
        c->txfree[c->ntxfree++] = rsp.id;
        if (c->probe_out && rsp.id == c->probe_id) {
            /* Any status shows the backend alive (Linux's netback and
             * ours answer a MCAST_DEL with OKAY, held or not). */
            c->probe_out = false;
            c->probes_answered++;
        } else if (c->txmc[rsp.id]) {
            c->txmc[rsp.id] = false;
            c->tx_mcast_pending--;
            if (rsp.status != NETIF_RSP_OKAY)
                c->mcast_err++;
        } else if (rsp.status == NETIF_RSP_OKAY)
            c->tx_pkts++;
        else
            c->tx_err++;
    }
    if (c->tx.rsp_cons != prod)
        *more = true;
    return 0;
}

static void rx_reset(struct nf_conn *c)
{
    c->rx_len = c->rx_slots = 0;
    c->rx_bad = c->rx_extras = c->rx_more = c->rx_has_gso = false;
    c->rx_flags = 0;
}

/* An extra-info slot of the packet being assembled. */
static int rx_extra(struct nf_conn *c, RING_IDX i, char *why, size_t len)
{
    netif_extra_info_t e;
    memcpy(&e, RING_GET_RESPONSE(&c->rx, i), sizeof(e));
    if (e.type != XEN_NETIF_EXTRA_TYPE_GSO || c->rx_has_gso) {
        /* GSO is the only one we asked for, once per packet. */
        snprintf(why, len, "rx extra-info of type %u that was not asked for", e.type);
        return -1;
    }
    c->rx_gso = e;
    c->rx_has_gso = true;
    c->rx_extras = (e.flags & XEN_NETIF_EXTRA_FLAG_MORE) != 0;
    return 0;
}

/* A data slot. */
static int rx_data(struct nf_conn *c, RING_IDX i, char *why, size_t len)
{
    netif_rx_response_t rsp;
    /* producer index (acquire in the caller) /then/ the response */
    RING_COPY_RESPONSE(&c->rx, i, &rsp);
    unsigned id = i % NF_RX_BUFS;
    if (rsp.id != id) {
        snprintf(why, len, "unknown-id rx slot %u id=%u (posted %u)", i, rsp.id, id);
        return -1;
    }
    bool first = c->rx_slots == 1; /* counted by the caller */
    if ((rsp.flags & NETRXF_extra_info) && !first) {
        snprintf(why, len, "rx id=%u: extra-info after the first slot", rsp.id);
        return -1;
    }
    if (first) {
        c->rx_flags = rsp.flags;
        c->rx_extras = (rsp.flags & NETRXF_extra_info) != 0;
    }
    if (rsp.status < 0) {
        c->rx_bad = true; /* the backend's error: that packet is lost */
    } else {
        unsigned sz = (unsigned)rsp.status;
        if ((unsigned)rsp.offset + sz > NF_PAGE) {
            snprintf(why, len, "rx id=%u offset %u + size %u crosses the page", rsp.id, rsp.offset,
                     sz);
            return -1;
        }
        if (c->rx_len + sz > NF_RX_MAX) {
            snprintf(why, len, "rx packet longer than %u bytes", NF_RX_MAX);
            return -1;
        }
        /* The backend may still write the page: copy, then look. */
        memcpy(c->rxbuf + c->rx_len, c->rxpg + (size_t)id * NF_PAGE + rsp.offset, sz);
        c->rx_len += sz;
    }
    c->rx_more = (rsp.flags & NETRXF_more_data) != 0;
    return 0;
}

static int harvest_rx(struct nf_conn *c, nf_rx_fn rx, void *arg, char *why, size_t len, bool *more)
{
    RING_IDX prod = __atomic_load_n(&c->rx.sring->rsp_prod, __ATOMIC_ACQUIRE);
    if (!sfv_ring_prod_ok(prod, c->rx.rsp_cons, c->rx.req_prod_pvt, RING_SIZE(&c->rx))) {
        snprintf(why, len, "rx rsp_prod %u with %u buffers posted", prod,
                 c->rx.req_prod_pvt - c->rx.rsp_cons);
        return -1;
    }
    unsigned n = 0;
    while (c->rx.rsp_cons != prod && n++ < HARVEST_MAX) {
        RING_IDX i = c->rx.rsp_cons;
        /* An extra-info overlays the response in the slot of the request it used. */
        bool extra = c->rx_slots > 0 && c->rx_extras;
        if (++c->rx_slots > NF_MAX_SLOTS + 1) {
            snprintf(why, len, "rx packet of more than %u slots", NF_MAX_SLOTS + 1);
            return -1;
        }
        if ((extra ? rx_extra(c, i, why, len) : rx_data(c, i, why, len)) < 0)
            return -1;
        c->rx.rsp_cons++;
        post_rx(c);
        if (c->rx_extras || c->rx_more)
            continue;
        if (c->rx_bad || c->rx_len < NET_ETH_HLEN) {
            c->rx_err++;
        } else {
            c->rx_pkts++;
            rx(arg, c->rxbuf, c->rx_len, c->rx_flags, c->rx_has_gso ? &c->rx_gso : NULL);
        }
        rx_reset(c);
    }
    if (c->rx.rsp_cons != prod)
        *more = true;
    return 0;
}

int nf_conn_harvest(struct nf_conn *c, nf_rx_fn rx, void *arg, char *why, size_t len)
{
    bool more = false;
    if (harvest_tx(c, why, len, &more) < 0 || harvest_rx(c, rx, arg, why, len, &more) < 0)
        return -1;
    int m;
    RING_FINAL_CHECK_FOR_RESPONSES(&c->tx, m);
    if (m)
        more = true;
    RING_FINAL_CHECK_FOR_RESPONSES(&c->rx, m);
    if (m)
        more = true;
    return more ? 1 : 0;
}

bool nf_conn_oldest(const struct nf_conn *c, uint64_t *since)
{
    bool any = false;
    for (unsigned i = 0; i < NF_TX_PAGES; i++) {
        if (c->txbusy[i] && (!any || c->txsince[i] < *since)) {
            *since = c->txsince[i];
            any = true;
        }
    }
    return any;
}
