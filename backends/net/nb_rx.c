/* nb_rx.c - guest receive: frames read from a queue's TAP fd are copied
 * into the rx buffers the frontend posted (one grant copy per pass) and
 * answered in the same ring slots as the requests they used (netif.h: the
 * frontend may rely on it), with a GSO extra-info slot after the first.
 *
 * A frame is filtered (multicast list), checked against what the frontend
 * can take (slots without feature-sg, the largest packet), then waits,
 * held, until enough buffers are posted: meanwhile the TAP is not read and
 * the kernel queues or drops. A frame held NB_RX_DRAIN_MS is dropped (the
 * frontend may never post as many buffers as it needs). We never write
 * outside a posted buffer: each copy targets one granted page at offset 0,
 * at most a page long.
 */
#define _GNU_SOURCE
#include "nb.h"

#include "net_l4.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static bool rx_stopped(struct nb_queue *q)
{
    return !q->attached || q->broken || be_fault_hung(q->d->be);
}

static unsigned data_slots(unsigned len)
{
    return (len + NB_PAGE_SIZE - 1) / NB_PAGE_SIZE;
}

static unsigned has_extra(const struct nb_rxpkt *pk)
{
    return pk->meta.gso_type != XEN_NETIF_GSO_TYPE_NONE;
}

/* Read one frame into at: 1 (pk filled), 0 (nothing to read), -1 (dropped). */
static int read_frame(struct nb_queue *q, uint8_t *at, struct nb_rxpkt *pk)
{
    struct nb_dev *d = q->d;
    ssize_t n = read(q->fd, at, NB_VNET_HDR + NB_RX_MAX_FRAME);
    if (n < 0) {
        if (nb_tap_gone_errno(errno))
            nb_tap_lost(d, "read", errno);
        else if (errno != EAGAIN && errno != EINTR)
            BE_LOG_RL(d->be, "queue %u: reading %s: %s", q->idx, d->tap.name, strerror(errno));
        return 0;
    }
    if ((size_t)n < NB_VNET_HDR + NET_ETH_HLEN) {
        d->rx_drop_bad++;
        return -1;
    }
    if ((size_t)n == NB_VNET_HDR + NB_RX_MAX_FRAME) { /* perhaps truncated */
        d->rx_drop_big++;
        return -1;
    }
    struct virtio_net_hdr h;
    memcpy(&h, at, sizeof(h));
    memset(pk, 0, sizeof(*pk));
    pk->data = at + NB_VNET_HDR;
    pk->len = (unsigned)n - NB_VNET_HDR;
    const char *why = "";
    if (nb_vnet_to_rx(&h, pk->data, pk->len, &d->caps, &pk->meta, &why) < 0) {
        BE_LOG_RL(d->be, "queue %u: rx frame of %u bytes dropped: %s", q->idx, pk->len, why);
        d->rx_drop_bad++;
        return -1;
    }
    if (!nb_mcast_allows(&d->mcast, d->mcast_filter, pk->data)) {
        d->rx_drop_mcast++;
        return -1;
    }
    unsigned ds = data_slots(pk->len);
    if (ds > (d->caps.sg ? NB_MAX_SLOTS : 1u)) {
        BE_LOG_RL(d->be,
                  "queue %u: rx frame of %u bytes dropped: more than the frontend's buffers "
                  "for one packet (%u%s)",
                  q->idx, pk->len, d->caps.sg ? NB_MAX_SLOTS : 1u,
                  d->caps.sg ? " slots" : " slot: no feature-sg");
        d->rx_drop_big++;
        return -1;
    }
    pk->need = ds + has_extra(pk);
    return 1;
}

/* Are need requests posted? If not, ask for an event when they are. */
static bool slots_posted(struct nb_queue *q, unsigned need, RING_IDX *rp)
{
    if (*rp - q->rx.req_cons >= need)
        return true;
    *rp = be_ring_req_event(&q->rxr, q->rx.req_cons + need);
    if (!be_ring_prod_ok(*rp, q->rx.req_cons, q->rx.rsp_prod_pvt, RING_SIZE(&q->rx))) {
        nb_queue_broken(q, "rx", *rp, q->rx.rsp_prod_pvt);
        return false;
    }
    return *rp - q->rx.req_cons >= need;
}

/* Take pk's requests off the ring and add its copy segments. */
static void take_slots(struct nb_queue *q, struct nb_rxpkt *pk, unsigned *nseg)
{
    pk->first = q->rx.req_cons;
    pk->seg0 = *nseg;
    unsigned k = 0;
    for (unsigned s = 0; s < pk->need; s++) {
        netif_rx_request_t req;
        RING_COPY_REQUEST(&q->rx, pk->first + s, &req);
        q->rx_ids[(pk->first + s) % NB_RING_SIZE] = req.id;
        if (s == 1 && has_extra(pk))
            continue; /* the extra-info slot carries no data */
        unsigned off = k * NB_PAGE_SIZE, len = pk->len - off;
        xengnttab_grant_copy_segment_t *g = &q->rseg[(*nseg)++];
        memset(g, 0, sizeof(*g));
        g->source.virt = pk->data + off;
        g->dest.foreign.ref = req.gref;
        g->dest.foreign.offset = 0;
        g->dest.foreign.domid = (uint16_t)be_fe_domid(q->d->be);
        g->len = (uint16_t)(len < NB_PAGE_SIZE ? len : NB_PAGE_SIZE);
        g->flags = GNTCOPY_dest_gref;
        k++;
    }
    pk->nseg = *nseg - pk->seg0;
    q->rx.req_cons += pk->need;
}

static void respond(struct nb_queue *q, const struct nb_rxpkt *pk, bool ok)
{
    unsigned ndata = pk->need - has_extra(pk), k = 0;
    for (unsigned s = 0; s < pk->need; s++) {
        RING_IDX i = pk->first + s;
        q->rx_extra[i % NB_RING_SIZE] = s == 1 && has_extra(pk);
        if (s == 1 && has_extra(pk)) {
            netif_extra_info_t e;
            memset(&e, 0, sizeof(e));
            e.type = XEN_NETIF_EXTRA_TYPE_GSO;
            e.u.gso.size = pk->meta.gso_size;
            e.u.gso.type = pk->meta.gso_type;
            memcpy(RING_GET_RESPONSE(&q->rx, i), &e, sizeof(e));
            continue;
        }
        unsigned off = k * NB_PAGE_SIZE, len = pk->len - off;
        netif_rx_response_t rsp = {.id = q->rx_ids[i % NB_RING_SIZE]};
        if (k == 0)
            rsp.flags = pk->meta.flags | (has_extra(pk) ? NETRXF_extra_info : 0);
        if (k + 1 < ndata)
            rsp.flags |= NETRXF_more_data;
        rsp.status = ok ? (int16_t)(len < NB_PAGE_SIZE ? len : NB_PAGE_SIZE) : NETIF_RSP_ERROR;
        *RING_GET_RESPONSE(&q->rx, i) = rsp;
        k++;
    }
    q->rx.rsp_prod_pvt = pk->first + pk->need;
}

static bool copied_ok(struct nb_queue *q, const struct nb_rxpkt *pk, bool copied)
{
    if (!copied)
        return false;
    for (unsigned i = 0; i < pk->nseg; i++) {
        const xengnttab_grant_copy_segment_t *g = &q->rseg[pk->seg0 + i];
        if (g->status != GNTST_okay) {
            BE_LOG_RL(q->d->be, "queue %u: rx buffer gref %u: grant copy failed (status %d)",
                      q->idx, g->dest.foreign.ref, g->status);
            return false;
        }
    }
    return true;
}

/* The held frame's buffers did not come in time: drop it, read on. */
static void drain(void *opaque)
{
    struct nb_queue *q = opaque;
    q->drain_timer = 0;
    if (!q->held.len)
        return;
    uint64_t waited = be_now_ms() - q->held_since_ms;
    if (waited < NB_RX_DRAIN_MS) { /* another frame is held now: its own full wait */
        q->drain_timer = be_loop_add_timer(be_loop_of(q->d->be), NB_RX_DRAIN_MS - waited, drain, q);
        return;
    }
    BE_LOG_RL(q->d->be,
              "queue %u: rx frame of %u bytes dropped: waited %llu ms for %u rx buffers "
              "(%u posted)",
              q->idx, q->held.len, (unsigned long long)waited, q->held.need,
              (unsigned)(q->rx.sring->req_prod - q->rx.req_cons));
    q->d->rx_drop_stall++;
    q->held.len = 0;
    nb_rx_run(q);
}

void nb_rx_stop(struct nb_queue *q)
{
    be_loop_del_timer(be_loop_of(q->d->be), q->drain_timer);
    q->drain_timer = 0;
}

void nb_rx_run(struct nb_queue *q)
{
    struct nb_dev *d = q->d;
    if (rx_stopped(q)) {
        nb_queue_watch(q, false); /* hung: the TAP's frames wait in the kernel */
        return;
    }
    RING_IDX rp = be_ring_req_prod(&q->rxr);
    if (!be_ring_prod_ok(rp, q->rx.req_cons, q->rx.rsp_prod_pvt, RING_SIZE(&q->rx))) {
        nb_queue_broken(q, "rx", rp, q->rx.rsp_prod_pvt);
        return;
    }
    unsigned npk = 0, nseg = 0, reads = 0;
    size_t staged = 0;
    bool stalled = false;
    if (q->held.len) { /* first in line: move it to the start of the staging memory */
        memmove(q->rstage + NB_VNET_HDR, q->held.data, q->held.len);
        q->held.data = q->rstage + NB_VNET_HDR;
        staged = NB_VNET_HDR + q->held.len;
    }
    while (npk < NB_BATCH && !q->broken) {
        struct nb_rxpkt *pk = &q->rpk[npk];
        if (q->held.len) {
            *pk = q->held;
        } else {
            if (staged + NB_VNET_HDR + NB_RX_MAX_FRAME > NB_STAGE_BYTES || reads++ > 4 * NB_BATCH)
                break;
            int r = read_frame(q, q->rstage + staged, pk);
            if (r == 0)
                break;
            if (r < 0)
                continue;
            staged += NB_VNET_HDR + pk->len;
        }
        if (!slots_posted(q, pk->need, &rp)) {
            if (!q->held.len)
                q->held_since_ms = be_now_ms();
            q->held = *pk;
            stalled = true;
            break;
        }
        q->held.len = 0;
        take_slots(q, pk, &nseg);
        npk++;
    }
    bool copied = true;
    if (nseg && xengnttab_grant_copy(be_gnttab(d->be), nseg, q->rseg) < 0) {
        BE_LOG_RL(d->be, "queue %u: xengnttab_grant_copy of %u segments to domain %u: %s", q->idx,
                  nseg, be_fe_domid(d->be), strerror(errno));
        copied = false;
    }
    for (unsigned k = 0; k < npk; k++) {
        bool ok = copied_ok(q, &q->rpk[k], copied);
        respond(q, &q->rpk[k], ok);
        if (ok) {
            d->rx_pkts++;
            d->rx_bytes += q->rpk[k].len;
        } else {
            d->rx_err++;
        }
    }
    if (npk)
        be_ring_publish(d->be, &q->rxr, q->rx.rsp_prod_pvt);
    /* While a frame waits for buffers, the TAP is not read. */
    nb_queue_watch(q, !stalled && !q->broken);
    if (stalled && !q->broken && !q->drain_timer)
        q->drain_timer = be_loop_add_timer(be_loop_of(d->be), NB_RX_DRAIN_MS, drain, q);
}
