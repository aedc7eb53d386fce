/* nb_connect.c - a connection: the frontend's keys (request-rx-copy,
 * feature-rx-notify, its offloads, multicast control, queues), each queue's
 * tx and rx rings and event channel(s), the TAP; and the disconnect that
 * undoes all of it.
 */
#define _GNU_SOURCE
#include "nb.h"

#include "pv-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_features(struct nb_dev *d, uint64_t *nq)
{
    struct be_dev *be = d->be;
    uint64_t copy, notify, sg, gso4, gso6, nocsum, csum6, mcast;
    if (be_read_fe_u64(be, PVK_NET_REQUEST_RX_COPY, 1, 0, &copy) < 0 ||
        be_read_fe_u64(be, PVK_NET_FEATURE_RX_NOTIFY, 1, 0, &notify) < 0 ||
        be_read_fe_u64(be, PVK_NET_FEATURE_SG, 1, 0, &sg) < 0 ||
        be_read_fe_u64(be, PVK_NET_FEATURE_GSO_TCPV4, 1, 0, &gso4) < 0 ||
        be_read_fe_u64(be, PVK_NET_FEATURE_GSO_TCPV6, 1, 0, &gso6) < 0 ||
        be_read_fe_u64(be, PVK_NET_FEATURE_NO_CSUM_OFFLOAD, 1, 0, &nocsum) < 0 ||
        be_read_fe_u64(be, PVK_NET_FEATURE_IPV6_CSUM, 1, 0, &csum6) < 0 ||
        be_read_fe_u64(be, PVK_NET_REQUEST_MCAST_CONTROL, 1, 0, &mcast) < 0 ||
        be_read_fe_u64(be, PVK_MQ_NUM_QUEUES, NB_MAX_QUEUES, 1, nq) < 0)
        return -1;
    if (!copy) {
        be_error(be, EOPNOTSUPP,
                 "frontend %s does not set request-rx-copy=1: page-flipping receive is not "
                 "supported, only rx-copy",
                 be_fe_path(be));
        return -1;
    }
    if (!notify) {
        be_error(be, EOPNOTSUPP, "frontend %s does not set feature-rx-notify=1 (required)",
                 be_fe_path(be));
        return -1;
    }
    if (*nq == 0) {
        be_error(be, EINVAL, "frontend %s/multi-queue-num-queues is 0", be_fe_path(be));
        return -1;
    }
    d->caps =
        (struct nb_rxcaps){.sg = sg, .csum4 = !nocsum, .csum6 = csum6, .gso4 = gso4, .gso6 = gso6};
    d->mcast_filter = mcast;
    return 0;
}

static void on_tx_event(struct be_dev *be, struct be_ring *r, void *opaque)
{
    (void)be;
    (void)r;
    struct nb_queue *q = opaque;
    nb_tx_run(q);
    if (!q->d->split)
        nb_rx_run(q);
}

static void on_rx_event(struct be_dev *be, struct be_ring *r, void *opaque)
{
    (void)be;
    (void)r;
    nb_rx_run(opaque);
}

static void on_tap(void *opaque, int fd, uint32_t events)
{
    (void)fd;
    (void)events;
    nb_rx_run(opaque);
}

void nb_queue_watch(struct nb_queue *q, bool on)
{
    struct be_loop *l = be_loop_of(q->d->be);
    if (on && !q->watched && q->fd >= 0) {
        if (be_loop_add_fd(l, q->fd, on_tap, q) < 0)
            BE_LOG_RL(q->d->be, "queue %u: watching TAP fd: %s", q->idx, strerror(errno));
        else
            q->watched = true;
    } else if (!on && q->watched) {
        be_loop_del_fd(l, q->fd);
        q->watched = false;
    }
}

static int attach_ring(struct be_dev *be, const char *dir, const char *key, struct be_ring *r,
                       bool tx, struct nb_queue *q)
{
    if (be_ring_map(be, dir, key, 1, false, r) < 0)
        return -1;
    RING_IDX rsp = be_ring_attach_at(r), req = be_ring_req_prod(r);
    unsigned size;
    if (tx) {
        BACK_RING_ATTACH(&q->tx, (netif_tx_sring_t *)r->sring, rsp, NB_PAGE_SIZE);
        size = RING_SIZE(&q->tx);
    } else {
        BACK_RING_ATTACH(&q->rx, (netif_rx_sring_t *)r->sring, rsp, NB_PAGE_SIZE);
        size = RING_SIZE(&q->rx);
    }
    if (req - rsp > size) {
        be_error(be, EPROTO,
                 "%s/%s: ring indexes req_prod %u rsp_prod %u impossible on a ring of %u", dir, key,
                 req, rsp, size);
        return -1;
    }
    return 0;
}

static int attach_queue(struct nb_dev *d, struct nb_queue *q, const char *dir)
{
    struct be_dev *be = d->be;
    q->tstage = malloc(NB_STAGE_BYTES);
    q->rstage = malloc(NB_STAGE_BYTES);
    if (!q->tstage || !q->rstage) {
        be_error(be, ENOMEM, "out of memory for queue %u", q->idx);
        return -1;
    }
    if (attach_ring(be, dir, PVK_NET_TX_RING_REF, &q->txr, true, q) < 0 ||
        attach_ring(be, dir, PVK_NET_RX_RING_REF, &q->rxr, false, q) < 0)
        return -1;
    q->attached = true;
    q->tx_last_us = nb_now_us();
    return 0;
}

static int bind_queue(struct nb_dev *d, struct nb_queue *q, const char *dir)
{
    struct be_dev *be = d->be;
    if (!d->split) {
        be_ring_notify_via(&q->rxr, &q->txr); /* one channel for both rings */
        return be_ring_bind(be, dir, PVK_EVENT_CHANNEL, &q->txr, on_tx_event, q);
    }
    if (be_ring_bind(be, dir, PVK_NET_EVENT_CHANNEL_TX, &q->txr, on_tx_event, q) < 0)
        return -1;
    return be_ring_bind(be, dir, PVK_NET_EVENT_CHANNEL_RX, &q->rxr, on_rx_event, q);
}

static void queue_dir(struct nb_dev *d, unsigned i, char *dir, size_t len)
{
    if (d->nq == 1)
        snprintf(dir, len, "%s", be_fe_path(d->be));
    else
        snprintf(dir, len, "%s/" PVK_QUEUE_FMT, be_fe_path(d->be), i);
}

static bool has_key(struct be_dev *be, const char *dir, const char *key)
{
    char *v = xsu_read(be_xs(be), XBT_NULL, dir, key, 32);
    free(v);
    return v != NULL;
}

int nb_connect(struct be_dev *be)
{
    struct nb_dev *d = be_priv(be);
    uint64_t nq;
    if (read_features(d, &nq) < 0)
        return -1;
    d->q = calloc(nq, sizeof(*d->q));
    if (!d->q) {
        be_error(be, ENOMEM, "out of memory for %u queues", (unsigned)nq);
        return -1;
    }
    d->nq = (unsigned)nq;
    /* Every queue is valid for nb_disconnect before anything can fail. */
    for (unsigned i = 0; i < d->nq; i++) {
        d->q[i].d = d;
        d->q[i].idx = i;
        d->q[i].fd = -1;
    }
    if (nb_mcwatch_start(&d->mcwatch, be, &d->mcast_filter) < 0)
        return -1;
    char dir[300];
    queue_dir(d, 0, dir, sizeof(dir));
    d->split = has_key(be, dir, PVK_NET_EVENT_CHANNEL_TX);
    for (unsigned i = 0; i < d->nq; i++) {
        queue_dir(d, i, dir, sizeof(dir));
        if (attach_queue(d, &d->q[i], dir) < 0)
            return -1;
    }
    char msg[256];
    if (nb_tap_open(&d->tap, &d->cfg, d->nq, nb_vnet_tun_offloads(&d->caps), msg, sizeof(msg)) <
        0) {
        be_error(be, errno ? errno : EIO, "TAP %s: %s", d->cfg.ifname, msg);
        return -1;
    }
    for (unsigned i = 0; i < d->nq; i++)
        d->q[i].fd = d->tap.fd[i];
    for (unsigned i = 0; i < d->nq; i++) {
        queue_dir(d, i, dir, sizeof(dir));
        if (bind_queue(d, &d->q[i], dir) < 0)
            return -1;
    }
    nb_credit_init(&d->credit, d->cfg.rate_bytes, d->cfg.rate_usec, be_now_ms() * 1000);
    nb_mcast_clear(&d->mcast);
    BE_LOG(be,
           "connected to %s: %u queue(s), %s event channels, TAP %s on bridge %s, mtu %u; "
           "frontend: sg %d, gso v4 %d v6 %d, csum v4 %d v6 %d, multicast filter %d; rate %s",
           be_fe_path(be), d->nq, d->split ? "split" : "shared", d->tap.name, d->cfg.bridge,
           d->cfg.mtu, d->caps.sg, d->caps.gso4, d->caps.gso6, d->caps.csum4, d->caps.csum6,
           d->mcast_filter, d->cfg.rate_bytes ? "limited" : "unlimited");
    for (unsigned i = 0; i < d->nq; i++)
        nb_queue_watch(&d->q[i], !be_fault_hung(be));
    nb_run_all(d); /* requests queued before we connected */
    return 0;
}

void nb_disconnect(struct be_dev *be)
{
    struct nb_dev *d = be_priv(be);
    nb_mcwatch_stop(&d->mcwatch);
    be_loop_del_timer(be_loop_of(be), d->credit_timer);
    d->credit_timer = 0;
    for (unsigned i = 0; d->q && i < d->nq; i++) {
        struct nb_queue *q = &d->q[i];
        nb_queue_watch(q, false);
        nb_unkick(q);
        nb_rx_stop(q);
        be_ring_unmap(be, &q->txr);
        be_ring_unmap(be, &q->rxr);
        free(q->tstage);
        free(q->rstage);
    }
    nb_tap_close(&d->tap);
    if (d->q)
        BE_LOG(be,
               "tx %llu packets %llu bytes (%llu refused or failed, %llu of them spoofed); rx "
               "%llu packets %llu bytes (%llu failed; dropped: %llu too big, %llu multicast "
               "filtered, %llu bad, %llu no buffers)",
               (unsigned long long)d->tx_pkts, (unsigned long long)d->tx_bytes,
               (unsigned long long)d->tx_err, (unsigned long long)d->tx_spoofed,
               (unsigned long long)d->rx_pkts, (unsigned long long)d->rx_bytes,
               (unsigned long long)d->rx_err, (unsigned long long)d->rx_drop_big,
               (unsigned long long)d->rx_drop_mcast, (unsigned long long)d->rx_drop_bad,
               (unsigned long long)d->rx_drop_stall);
    free(d->q);
    d->q = NULL;
    d->nq = 0;
    nb_mcast_clear(&d->mcast);
    d->tx_pkts = d->tx_bytes = d->tx_err = d->tx_spoofed = d->rx_pkts = d->rx_bytes = d->rx_err = 0;
    d->rx_drop_big = d->rx_drop_mcast = d->rx_drop_bad = d->rx_drop_stall = d->mcast_ops = 0;
}
