/* nf_offload.c - virtio_net_hdr <-> netif offloads (see nf_offload.h). */
#define _GNU_SOURCE
#include "nf_offload.h"

#include "inet_csum.h"
#include "net_l4.h"
#include "net_vnet.h"

#include <linux/if_tun.h>
#include <string.h>

unsigned nf_off_tun_flags(const struct nf_txcaps *c)
{
    /* Partial checksums we can always take: what the backend cannot, we complete. */
    unsigned f = TUN_F_CSUM;
    if (c->gso4)
        f |= TUN_F_TSO4;
    if (c->gso6 && c->csum6)
        f |= TUN_F_TSO6;
    return f;
}

int nf_off_tx(const struct virtio_net_hdr *h, uint8_t *frame, unsigned len,
              const struct nf_txcaps *c, uint16_t *flags, netif_extra_info_t *gso, bool *gso_out,
              const char **why)
{
    *flags = 0;
    *gso_out = false;
    if (h->flags & VIRTIO_NET_HDR_F_DATA_VALID)
        *flags |= NETTXF_data_validated;
    unsigned g = h->gso_type & (unsigned)~VIRTIO_NET_HDR_GSO_ECN;
    if (g != VIRTIO_NET_HDR_GSO_NONE) {
        if (!(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || h->gso_size == 0) {
            *why = "GSO frame without a partial checksum or segment size";
            return -1;
        }
        memset(gso, 0, sizeof(*gso));
        gso->type = XEN_NETIF_EXTRA_TYPE_GSO;
        gso->u.gso.size = h->gso_size;
        if (g == VIRTIO_NET_HDR_GSO_TCPV4 && c->gso4) {
            gso->u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
        } else if (g == VIRTIO_NET_HDR_GSO_TCPV6 && c->gso6 && c->csum6) {
            gso->u.gso.type = XEN_NETIF_GSO_TYPE_TCPV6;
        } else {
            *why = "GSO frame of a kind the backend does not take";
            return -1;
        }
        *gso_out = true;
        *flags |= NETTXF_csum_blank | NETTXF_data_validated;
        return 0;
    }
    if (!(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
        return 0;
    unsigned off;
    unsigned type = net_l3(frame, len, &off);
    if (type == NET_ETHERTYPE_IPV4 || (type == NET_ETHERTYPE_IPV6 && c->csum6)) {
        if ((unsigned)h->csum_start + h->csum_offset + 2u > len) {
            *why = "partial checksum outside the frame";
            return -1;
        }
        *flags |= NETTXF_csum_blank | NETTXF_data_validated;
        return 0;
    }
    if (inet_csum_complete(frame, len, h->csum_start, h->csum_offset) < 0) {
        *why = "partial checksum outside the frame";
        return -1;
    }
    *flags |= NETTXF_data_validated;
    return 0;
}

int nf_off_rx(uint16_t rxflags, const netif_extra_info_t *gso, const uint8_t *frame, unsigned len,
              struct virtio_net_hdr *h, const char **why)
{
    return net_vnet_from_netif(rxflags & NETRXF_csum_blank, rxflags & NETRXF_data_validated, gso,
                               frame, len, h, why);
}
