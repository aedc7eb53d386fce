/* nf_offload.c - virtio_net_hdr <-> netif offloads (see nf_offload.h). */
#define _GNU_SOURCE
#include "nf_offload.h"

#include <linux/if_tun.h>
#include <string.h>

#define NF_ETHERTYPE_IPV4 0x0800u
#define NF_ETHERTYPE_IPV6 0x86ddu
#define NF_ETHERTYPE_VLAN 0x8100u

struct l4 {
    unsigned ipver; /* 4 or 6 */
    unsigned proto; /* 6 (TCP) or 17 (UDP) */
    unsigned off;   /* where the L4 header starts */
    unsigned hlen;  /* its length */
    unsigned csum;  /* offset of its checksum field in it */
};

static unsigned be16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

/* The frame's network protocol and where its headers end. */
static unsigned l3(const uint8_t *f, unsigned len, unsigned *off)
{
    if (len < NF_ETH_HLEN)
        return 0;
    unsigned type = be16(f + 12);
    *off = NF_ETH_HLEN;
    if (type == NF_ETHERTYPE_VLAN) {
        if (len < NF_ETH_HLEN + 4)
            return 0;
        type = be16(f + 16);
        *off += 4;
    }
    return type;
}

/* TCP or UDP over IPv4 (unfragmented) or IPv6 (no extension headers). */
static int parse_l4(const uint8_t *f, unsigned len, struct l4 *l, const char **why)
{
    unsigned off;
    unsigned type = l3(f, len, &off);
    *why = "not TCP or UDP over IPv4 or IPv6";
    if (type == NF_ETHERTYPE_IPV4) {
        if (len < off + 20)
            return -1;
        unsigned ihl = (f[off] & 0xfu) * 4u;
        if ((f[off] >> 4) != 4 || ihl < 20 || len < off + ihl || (be16(f + off + 6) & 0x3fffu))
            return -1;
        l->ipver = 4;
        l->proto = f[off + 9];
        l->off = off + ihl;
    } else if (type == NF_ETHERTYPE_IPV6) {
        if (len < off + 40 || (f[off] >> 4) != 6)
            return -1;
        l->ipver = 6;
        l->proto = f[off + 6];
        l->off = off + 40;
    } else {
        return -1;
    }
    if (l->proto == 6) {
        if (len < l->off + 20)
            return -1;
        l->hlen = (f[l->off + 12] >> 4) * 4u;
        l->csum = 16;
        if (l->hlen < 20 || len < l->off + l->hlen)
            return -1;
    } else if (l->proto == 17) {
        if (len < l->off + 8)
            return -1;
        l->hlen = 8;
        l->csum = 6;
    } else {
        return -1;
    }
    return 0;
}

int nf_csum_complete(uint8_t *frame, unsigned len, unsigned start, unsigned off)
{
    if (start > len || off > len - start || len - start - off < 2)
        return -1;
    uint32_t sum = 0;
    unsigned i = start;
    for (; i + 1 < len; i += 2)
        sum += be16(frame + i);
    if (i < len)
        sum += (uint32_t)frame[i] << 8;
    while (sum >> 16)
        sum = (sum & 0xffffu) + (sum >> 16);
    uint16_t c = (uint16_t)~sum;
    if (c == 0)
        c = 0xffff; /* the same in ones' complement; UDP reserves 0 for "none" */
    frame[start + off] = (uint8_t)(c >> 8);
    frame[start + off + 1] = (uint8_t)c;
    return 0;
}

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
    unsigned type = l3(frame, len, &off);
    if (type == NF_ETHERTYPE_IPV4 || (type == NF_ETHERTYPE_IPV6 && c->csum6)) {
        if ((unsigned)h->csum_start + h->csum_offset + 2u > len) {
            *why = "partial checksum outside the frame";
            return -1;
        }
        *flags |= NETTXF_csum_blank | NETTXF_data_validated;
        return 0;
    }
    if (nf_csum_complete(frame, len, h->csum_start, h->csum_offset) < 0) {
        *why = "partial checksum outside the frame";
        return -1;
    }
    *flags |= NETTXF_data_validated;
    return 0;
}

int nf_off_rx(uint16_t rxflags, const netif_extra_info_t *gso, const uint8_t *frame, unsigned len,
              struct virtio_net_hdr *h, const char **why)
{
    memset(h, 0, sizeof(*h));
    if (gso && !(rxflags & NETRXF_csum_blank)) {
        *why = "GSO packet without a partial checksum";
        return -1;
    }
    if (rxflags & NETRXF_csum_blank) {
        struct l4 l;
        if (parse_l4(frame, len, &l, why) < 0)
            return -1;
        h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
        h->csum_start = (uint16_t)l.off;
        h->csum_offset = (uint16_t)l.csum;
        if (gso) {
            unsigned want = gso->u.gso.type == XEN_NETIF_GSO_TYPE_TCPV4   ? 4
                            : gso->u.gso.type == XEN_NETIF_GSO_TYPE_TCPV6 ? 6
                                                                          : 0;
            if (!want || l.proto != 6 || l.ipver != want || gso->u.gso.size == 0) {
                *why = "GSO extra-info that does not match the packet";
                return -1;
            }
            h->gso_type = want == 4 ? VIRTIO_NET_HDR_GSO_TCPV4 : VIRTIO_NET_HDR_GSO_TCPV6;
            h->gso_size = gso->u.gso.size;
            h->hdr_len = (uint16_t)(l.off + l.hlen);
        }
    } else if (rxflags & NETRXF_data_validated) {
        h->flags = VIRTIO_NET_HDR_F_DATA_VALID;
    }
    return 0;
}
