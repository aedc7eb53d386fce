/* nf_xenbus.c - netif keys. */
#define _GNU_SOURCE
#include "nf_xenbus.h"

#include "hex.h"
#include "pv-keys.h"
#include "xs_txn.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nf_parse_mac(const char *s, uint8_t mac[6])
{
    if (strlen(s) != 17)
        return -1;
    for (unsigned i = 0; i < 6; i++) {
        int h = hex_digit(s[3 * i]), l = hex_digit(s[3 * i + 1]);
        if (h < 0 || l < 0 || (i < 5 && s[3 * i + 2] != ':'))
            return -1;
        mac[i] = (uint8_t)(h << 4 | l);
    }
    return (mac[0] & 1) ? -1 : 0; /* a NIC's own address is unicast */
}

static int read_mac(struct sfx *x, const char *dir, uint8_t mac[6])
{
    char *v = xsu_read(sfx_xs(x), XBT_NULL, dir, PVK_NET_MAC, 64);
    if (!v)
        return -1;
    int r = nf_parse_mac(v, mac);
    free(v);
    if (r < 0)
        errno = EINVAL;
    return r;
}

int nf_read_fe_mac(struct sfx *x, uint8_t mac[6])
{
    return read_mac(x, x->dev, mac);
}

static int read_flag(struct sfx *x, const char *key, bool *out)
{
    uint64_t v;
    if (xsu_read_u64_default(sfx_xs(x), XBT_NULL, x->be, key, UINT32_MAX, 0, &v) < 0)
        return -1;
    *out = v != 0;
    return 0;
}

int nf_read_features(struct sfx *x, struct nf_features *f, const char **why)
{
    memset(f, 0, sizeof(*f));
    bool copy;
    *why = PVK_NET_FEATURE_RX_COPY;
    if (read_flag(x, PVK_NET_FEATURE_RX_COPY, &copy) < 0)
        return -1;
    if (!copy) {
        *why = "feature-rx-copy (absent or 0: page flipping is not supported)";
        errno = EOPNOTSUPP;
        return -1;
    }
    struct {
        const char *key;
        bool *out;
    } flags[] = {{PVK_NET_FEATURE_SG, &f->sg},
                 {PVK_NET_FEATURE_GSO_TCPV4, &f->gso4},
                 {PVK_NET_FEATURE_GSO_TCPV6, &f->gso6},
                 {PVK_NET_FEATURE_IPV6_CSUM, &f->csum6},
                 {PVK_NET_FEATURE_MCAST_CONTROL, &f->mcast},
                 {PVK_NET_FEATURE_DYN_MCAST_CTRL, &f->mcast_dynamic}};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        *why = flags[i].key;
        if (read_flag(x, flags[i].key, flags[i].out) < 0)
            return -1;
    }
    uint64_t q;
    *why = PVK_MQ_MAX_QUEUES;
    if (xsu_read_u64_default(sfx_xs(x), XBT_NULL, x->be, PVK_MQ_MAX_QUEUES, UINT32_MAX, 1, &q) < 0)
        return -1;
    f->max_queues = (unsigned)q;
    *why = PVK_NET_MAC;
    if (read_mac(x, x->be, f->mac) == 0)
        f->has_mac = true;
    else if (errno != ENOENT)
        return -1;
    return 0;
}

static int write_queue(struct sfx *x, xs_transaction_t t, const char *dir, uint32_t tx_ref,
                       uint32_t rx_ref, unsigned port)
{
    struct xs_handle *xs = sfx_xs(x);
    if (xsu_printf(xs, t, dir, PVK_NET_TX_RING_REF, "%u", tx_ref) < 0 ||
        xsu_printf(xs, t, dir, PVK_NET_RX_RING_REF, "%u", rx_ref) < 0 ||
        xsu_printf(xs, t, dir, PVK_EVENT_CHANNEL, "%u", port) < 0)
        return -1;
    return 0;
}

struct transport {
    struct sfx *x;
    unsigned nq;
    const uint32_t *tx_refs, *rx_refs;
    const unsigned *ports;
    bool mcast_filter, offloads;
};

static int write_all(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    const struct transport *tr = arg;
    struct sfx *x = tr->x;
    unsigned nq = tr->nq;
    const uint32_t *tx_refs = tr->tx_refs, *rx_refs = tr->rx_refs;
    const unsigned *ports = tr->ports;
    bool mcast_filter = tr->mcast_filter, off = tr->offloads;
    if (nq == 1) {
        if (write_queue(x, t, x->fe, tx_refs[0], rx_refs[0], ports[0]) < 0)
            return -1;
    } else {
        if (xsu_printf(xs, t, x->fe, PVK_MQ_NUM_QUEUES, "%u", nq) < 0)
            return -1;
        for (unsigned q = 0; q < nq; q++) {
            char dir[SFX_PATH_MAX + 24];
            snprintf(dir, sizeof(dir), "%s/" PVK_QUEUE_FMT, x->fe, q);
            if (write_queue(x, t, dir, tx_refs[q], rx_refs[q], ports[q]) < 0)
                return -1;
        }
    }
    const struct {
        const char *key;
        unsigned val;
    } kv[] = {
        {PVK_NET_REQUEST_RX_COPY, 1},
        {PVK_NET_FEATURE_RX_NOTIFY, 1},
        {PVK_NET_FEATURE_SG, 1},
        /* rx: partial checksums and GSO packets go to the TAP as they are
         * (virtio_net_hdr); without offloads they come complete and small. */
        {PVK_NET_FEATURE_NO_CSUM_OFFLOAD, !off},
        {PVK_NET_FEATURE_IPV6_CSUM, off},
        {PVK_NET_FEATURE_GSO_TCPV4, off},
        {PVK_NET_FEATURE_GSO_TCPV6, off},
        {PVK_NET_REQUEST_MCAST_CONTROL, mcast_filter},
    };
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
        if (xsu_printf(xs, t, x->fe, kv[i].key, "%u", kv[i].val) < 0)
            return -1;
    return 0;
}

int nf_write_transport(struct sfx *x, unsigned nq, const uint32_t *tx_refs, const uint32_t *rx_refs,
                       const unsigned *ports, bool mcast_filter, bool offloads)
{
    struct transport tr = {.x = x,
                           .nq = nq,
                           .tx_refs = tx_refs,
                           .rx_refs = rx_refs,
                           .ports = ports,
                           .mcast_filter = mcast_filter,
                           .offloads = offloads};
    return xsu_txn(sfx_xs(x), write_all, &tr, NULL);
}

int nf_write_mcast_request(struct sfx *x, bool on)
{
    return xsu_printf(sfx_xs(x), XBT_NULL, x->fe, PVK_NET_REQUEST_MCAST_CONTROL, "%u",
                      on ? 1u : 0u);
}

void nf_remove_transport(struct sfx *x)
{
    enum { NKEYS = 4, NQDIRS = 8 }; /* queue dirs of any earlier connection, ours or not */
    const char *all[NKEYS + NQDIRS] = {PVK_NET_TX_RING_REF, PVK_NET_RX_RING_REF, PVK_EVENT_CHANNEL,
                                       PVK_MQ_NUM_QUEUES};
    char qdir[NQDIRS][16];
    for (unsigned q = 0; q < NQDIRS; q++) {
        snprintf(qdir[q], sizeof(qdir[q]), PVK_QUEUE_FMT, q);
        all[NKEYS + q] = qdir[q];
    }
    sfx_remove_present(x, all, NKEYS + NQDIRS);
}
