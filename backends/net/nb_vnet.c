/* nb_vnet.c - netif offloads <-> virtio_net_hdr (see nb_vnet.h). */
#define _GNU_SOURCE
#include "nb_vnet.h"

#include "inet_csum.h"
#include "net_l4.h"
#include "net_vnet.h"

#include <linux/if_tun.h>
#include <string.h>

unsigned nb_vnet_tun_offloads(const struct nb_rxcaps *c)
{
    /* Partial checksums we can always take: what the frontend cannot, we complete. */
    unsigned f = TUN_F_CSUM;
    if (c->sg && c->csum4 && c->gso4)
        f |= TUN_F_TSO4;
    if (c->sg && c->csum6 && c->gso6)
        f |= TUN_F_TSO6;
    return f;
}

int nb_vnet_from_tx(const struct nb_txpkt *p, const uint8_t *pkt, size_t len,
                    struct virtio_net_hdr *h, const char **why)
{
    /* A GSO request implies a partial checksum (nb_txcheck checked its type
     * and size). */
    bool gso = p->extras & (1u << XEN_NETIF_EXTRA_TYPE_GSO);
    return net_vnet_from_netif((p->flags & NETTXF_csum_blank) || gso,
                               p->flags & NETTXF_data_validated,
                               gso ? &p->extra[XEN_NETIF_EXTRA_TYPE_GSO] : NULL, pkt, len, h, why);
}

static int rx_csum(const struct virtio_net_hdr *h, uint8_t *pkt, size_t len,
                   const struct nb_rxcaps *c, struct nb_rxmeta *m, const char **why)
{
    struct net_l4 l;
    const char *ignored;
    bool frontend_can = net_l4(pkt, len, &l, &ignored) == 0 && l.l4_off == h->csum_start &&
                        l.csum_off == h->csum_offset && (l.ipver == 4 ? c->csum4 : c->csum6);
    if (frontend_can) {
        m->flags |= NETRXF_csum_blank | NETRXF_data_validated;
        return 0;
    }
    if (h->gso_type != VIRTIO_NET_HDR_GSO_NONE) {
        *why = "GSO frame whose checksum the frontend cannot take";
        return -1;
    }
    if (inet_csum_complete(pkt, len, h->csum_start, h->csum_offset) < 0) {
        *why = "checksum offsets outside the frame";
        return -1;
    }
    m->flags |= NETRXF_data_validated;
    return 0;
}

int nb_vnet_to_rx(const struct virtio_net_hdr *h, uint8_t *pkt, size_t len,
                  const struct nb_rxcaps *c, struct nb_rxmeta *m, const char **why)
{
    memset(m, 0, sizeof(*m));
    if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
        if (rx_csum(h, pkt, len, c, m, why) < 0)
            return -1;
    } else if (h->flags & VIRTIO_NET_HDR_F_DATA_VALID) {
        m->flags |= NETRXF_data_validated;
    }
    unsigned g = h->gso_type & (unsigned)~VIRTIO_NET_HDR_GSO_ECN;
    if (g == VIRTIO_NET_HDR_GSO_NONE)
        return 0;
    if (!(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || h->gso_size == 0) {
        *why = "GSO frame without a partial checksum or segment size";
        return -1;
    }
    if (g == VIRTIO_NET_HDR_GSO_TCPV4 && c->gso4 && c->sg) {
        m->gso_type = XEN_NETIF_GSO_TYPE_TCPV4;
    } else if (g == VIRTIO_NET_HDR_GSO_TCPV6 && c->gso6 && c->sg) {
        m->gso_type = XEN_NETIF_GSO_TYPE_TCPV6;
    } else {
        *why = "GSO type the frontend does not take";
        return -1;
    }
    m->gso_size = h->gso_size;
    return 0;
}
