/* nb_tx.c - guest transmit: take packets off a queue's tx ring, copy them
 * out of the guest's pages with one grant copy per pass, write them to the
 * TAP, answer every slot.
 *
 * A pass copies every unconsumed request out of the ring first (once: the
 * frontend may rewrite slots meanwhile), decodes and checks packets from
 * that copy (nb_txcheck.c), and answers each slot exactly once: the data
 * slots with the packet's status, extra-info slots with NETIF_RSP_NULL. A
 * packet whose slots are not all posted yet waits for the next pass; one
 * that could never end (a full ring, still more_data) breaks the ring.
 */
#define _GNU_SOURCE
#include "nb.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void credit_back(void *opaque)
{
    struct nb_dev *d = opaque;
    d->credit_timer = 0;
    nb_run_all(d);
}

static bool tx_stopped(struct nb_queue *q)
{
    return !q->attached || q->broken || be_fault_hung(q->d->be) || q->d->credit_timer;
}

static void respond(struct nb_queue *q, uint16_t id, int16_t status)
{
    netif_tx_response_t rsp = {.id = id, .status = status};
    *RING_GET_RESPONSE(&q->tx, q->tx.rsp_prod_pvt) = rsp;
    q->tx.rsp_prod_pvt++;
}

/* Answer every slot of packet k of this pass. */
static void respond_pkt(struct nb_queue *q, const struct nb_txq_pkt *tp, int16_t status)
{
    const netif_tx_request_t *s = &q->slots[tp->slot0];
    respond(q, s[0].id, status);
    for (unsigned i = 1; i < tp->p.data_off; i++)
        respond(q, 0, NETIF_RSP_NULL);
    for (unsigned k = 1; k < tp->p.ndata; k++)
        respond(q, nb_txpkt_slot(s, &tp->p, k)->id, status);
}

static void log_refused(struct nb_queue *q, const struct nb_txq_pkt *tp, const char *why)
{
    const netif_tx_request_t *s = &q->slots[tp->slot0];
    BE_LOG_RL(q->d->be,
              "queue %u: tx packet id %u (%u slots, size %u, flags %#x, gref %u offset %u) "
              "dropped: %s",
              q->idx, s->id, tp->p.nslots, tp->p.total, tp->p.flags, s->gref, s->offset, why);
}

static int16_t do_mcast(struct nb_queue *q, const struct nb_txpkt *p)
{
    struct nb_dev *d = q->d;
    d->mcast_ops++;
    if (p->extras & (1u << XEN_NETIF_EXTRA_TYPE_MCAST_DEL))
        nb_mcast_del(&d->mcast, p->extra[XEN_NETIF_EXTRA_TYPE_MCAST_DEL].u.mcast.addr);
    if (p->extras & (1u << XEN_NETIF_EXTRA_TYPE_MCAST_ADD) &&
        nb_mcast_add(&d->mcast, p->extra[XEN_NETIF_EXTRA_TYPE_MCAST_ADD].u.mcast.addr) < 0) {
        const uint8_t *a = p->extra[XEN_NETIF_EXTRA_TYPE_MCAST_ADD].u.mcast.addr;
        BE_LOG_RL(d->be, "queue %u: multicast add %02x:%02x:%02x:%02x:%02x:%02x refused: %s",
                  q->idx, a[0], a[1], a[2], a[3], a[4], a[5],
                  errno == ENOSPC ? "list full" : "not a multicast address");
        return NETIF_RSP_ERROR;
    }
    return NETIF_RSP_OKAY;
}

/* Copy segments for a valid packet's data into tp->buf. */
static void add_segs(struct nb_queue *q, struct nb_txq_pkt *tp, unsigned *nseg)
{
    const netif_tx_request_t *s = &q->slots[tp->slot0];
    uint8_t *dst = tp->buf + NB_VNET_HDR;
    tp->seg0 = *nseg;
    for (unsigned k = 0; k < tp->p.ndata; k++) {
        const netif_tx_request_t *r = nb_txpkt_slot(s, &tp->p, k);
        uint16_t len = k == 0 ? tp->p.first_len : r->size;
        if (len == 0)
            continue;
        xengnttab_grant_copy_segment_t *g = &q->tseg[(*nseg)++];
        memset(g, 0, sizeof(*g));
        g->source.foreign.ref = r->gref;
        g->source.foreign.offset = r->offset;
        g->source.foreign.domid = (uint16_t)be_fe_domid(q->d->be);
        g->dest.virt = dst;
        g->len = len;
        g->flags = GNTCOPY_source_gref;
        dst += len;
    }
    tp->nseg = *nseg - tp->seg0;
}

/* Send one copied packet to the TAP; its status. */
static int16_t send_pkt(struct nb_queue *q, struct nb_txq_pkt *tp, bool copied)
{
    struct nb_dev *d = q->d;
    for (unsigned i = 0; i < tp->nseg; i++) {
        const xengnttab_grant_copy_segment_t *g = &q->tseg[tp->seg0 + i];
        if (!copied || g->status != GNTST_okay) {
            BE_LOG_RL(d->be, "queue %u: tx packet id %u: copying gref %u offset %u len %u: %s",
                      q->idx, q->slots[tp->slot0].id, g->source.foreign.ref,
                      g->source.foreign.offset, g->len,
                      copied ? "grant copy failed" : "the grant copy call failed");
            return NETIF_RSP_ERROR;
        }
    }
    const char *why = "";
    struct virtio_net_hdr h;
    uint8_t *frame = tp->buf + NB_VNET_HDR;
    if (nb_vnet_from_tx(&tp->p, frame, tp->p.total, &h, &why) < 0) {
        log_refused(q, tp, why);
        return NETIF_RSP_ERROR;
    }
    /* A well-formed frame from an address that is not the guest's: dropped
     * here, as the hotplug scripts' antispoof rules would at the bridge. */
    const char *spoof = nb_spoof_check(&d->cfg.spoof, frame, tp->p.total);
    if (spoof) {
        BE_LOG_RL(d->be, "queue %u: tx frame of %u bytes dropped: %s", q->idx, tp->p.total, spoof);
        d->tx_spoofed++;
        return NETIF_RSP_DROPPED;
    }
    memcpy(tp->buf, &h, sizeof(h));
    ssize_t n = write(q->fd, tp->buf, NB_VNET_HDR + tp->p.total);
    if (n < 0 && nb_tap_gone_errno(errno)) {
        nb_tap_lost(d, "write", errno);
        return NETIF_RSP_DROPPED;
    }
    if (n < 0) {
        BE_LOG_RL(d->be, "queue %u: writing a %u-byte frame to %s: %s", q->idx, tp->p.total,
                  d->tap.name, strerror(errno));
        return errno == EINVAL ? NETIF_RSP_ERROR : NETIF_RSP_DROPPED;
    }
    d->tx_pkts++;
    d->tx_bytes += tp->p.total;
    return NETIF_RSP_OKAY;
}

/* Wait for credit: false if the packet may go now (credit spent). */
static bool wait_credit(struct nb_dev *d, unsigned size)
{
    if (!nb_credit_limited(&d->credit))
        return false;
    uint64_t wait = nb_credit_take(&d->credit, size, nb_now_us());
    if (!wait)
        return false;
    d->credit_timer = be_loop_add_timer(be_loop_of(d->be), (wait + 999) / 1000, credit_back, d);
    return d->credit_timer != 0;
}

/* Requests after a long quiet - a hot standby's first after its promotion
 * (the frontend connected it and sent nothing since) - with the wall clock
 * (each domain takes Xen's at its boot; the frontend logs its own): where a
 * switch's time goes between the two, to within their offset. */
static void note_quiet_end(struct nb_queue *q, unsigned avail)
{
    uint64_t now = nb_now_us(), quiet = now - q->tx_last_us;
    q->tx_last_us = now;
    if (quiet < NB_QUIET_NOTE_US)
        return;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    BE_LOG(q->d->be,
           "queue %u: %u tx slots after %" PRIu64 " ms without any (wall clock %lld.%03ld)", q->idx,
           avail, quiet / 1000, (long long)t.tv_sec, t.tv_nsec / 1000000);
}

/* One pass: returns the number of slots consumed; *partial if it stopped at
 * a packet whose slots are not all posted yet. */
static unsigned tx_pass(struct nb_queue *q, bool *partial)
{
    struct nb_dev *d = q->d;
    RING_IDX rp = be_ring_req_prod(&q->txr);
    if (!be_ring_prod_ok(rp, q->tx.req_cons, q->tx.rsp_prod_pvt, RING_SIZE(&q->tx))) {
        nb_queue_broken(q, "tx", rp, q->tx.rsp_prod_pvt);
        return 0;
    }
    unsigned avail = rp - q->tx.req_cons;
    if (avail)
        note_quiet_end(q, avail);
    for (unsigned i = 0; i < avail; i++)
        RING_COPY_REQUEST(&q->tx, q->tx.req_cons + i, &q->slots[i]);
    unsigned pos = 0, npk = 0, nseg = 0;
    size_t staged = 0;
    while (pos < avail && npk < NB_BATCH) {
        struct nb_txq_pkt *tp = &q->tpk[npk];
        unsigned used = nb_tx_decode(&q->slots[pos], avail - pos, &tp->p);
        if (used == 0) {
            if (pos == 0 && avail == RING_SIZE(&q->tx))
                nb_queue_broken(q, "tx (a packet longer than the ring)", rp, q->tx.rsp_prod_pvt);
            *partial = true;
            q->tx_seen = rp;
            break;
        }
        tp->slot0 = pos;
        tp->nseg = 0;
        tp->buf = NULL;
        if (tp->p.status == NETIF_RSP_OKAY && !nb_txpkt_is_mcast(&tp->p)) {
            if (staged + NB_VNET_HDR + tp->p.total > NB_STAGE_BYTES)
                break;
            if (wait_credit(d, tp->p.total))
                break;
            tp->buf = q->tstage + staged;
            staged += NB_VNET_HDR + tp->p.total;
            add_segs(q, tp, &nseg);
        }
        pos += used;
        npk++;
    }
    q->tx.req_cons += pos;
    bool copied = true;
    if (nseg && xengnttab_grant_copy(be_gnttab(d->be), nseg, q->tseg) < 0) {
        BE_LOG_RL(d->be, "queue %u: xengnttab_grant_copy of %u segments from domain %u: %s", q->idx,
                  nseg, be_fe_domid(d->be), strerror(errno));
        copied = false;
    }
    for (unsigned k = 0; k < npk; k++) {
        struct nb_txq_pkt *tp = &q->tpk[k];
        int16_t st = tp->p.status;
        if (st != NETIF_RSP_OKAY)
            log_refused(q, tp, tp->p.why);
        else if (nb_txpkt_is_mcast(&tp->p))
            st = do_mcast(q, &tp->p);
        else
            st = send_pkt(q, tp, copied);
        if (st != NETIF_RSP_OKAY)
            d->tx_err++;
        respond_pkt(q, tp, st);
    }
    if (npk)
        be_ring_publish(d->be, &q->txr, q->tx.rsp_prod_pvt);
    return pos;
}

void nb_tx_run(struct nb_queue *q)
{
    /* Bounded: other queues and the rx side get their turn. */
    for (unsigned rounds = 0; rounds < 8; rounds++) {
        bool partial = false;
        if (tx_stopped(q))
            return;
        if (tx_pass(q, &partial))
            continue;
        if (tx_stopped(q))
            return;
        if (partial) {
            /* The rest of the packet is not posted: an event when it is. */
            if (be_ring_req_event(&q->txr, q->tx_seen + 1) == q->tx_seen)
                return;
            continue;
        }
        int more;
        RING_FINAL_CHECK_FOR_REQUESTS(&q->tx, more);
        if (!more)
            return;
    }
    nb_kick(q); /* more to do: after the loop's other events */
}
