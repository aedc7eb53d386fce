/* net_vnet.c - netif offloads as a virtio_net_hdr (see net_vnet.h). */
#define _GNU_SOURCE
#include "net_vnet.h"

#include "net_l4.h"

#include <errno.h>
#include <string.h>

static int fail(const char **why, const char *what)
{
    *why = what;
    errno = EINVAL;
    return -1;
}

int net_vnet_from_netif(bool csum_blank, bool data_valid, const netif_extra_info_t *gso,
                        const uint8_t *frame, size_t len, struct virtio_net_hdr *h,
                        const char **why)
{
    memset(h, 0, sizeof(*h));
    if (gso && !csum_blank)
        return fail(why, "GSO packet without a partial checksum");
    if (!csum_blank) {
        if (data_valid)
            h->flags = VIRTIO_NET_HDR_F_DATA_VALID;
        return 0;
    }
    struct net_l4 l;
    if (net_l4(frame, len, &l, why) < 0)
        return -1;
    h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
    h->csum_start = (uint16_t)l.l4_off;
    h->csum_offset = (uint16_t)l.csum_off;
    if (!gso)
        return 0;
    unsigned want = gso->u.gso.type == XEN_NETIF_GSO_TYPE_TCPV4   ? 4
                    : gso->u.gso.type == XEN_NETIF_GSO_TYPE_TCPV6 ? 6
                                                                  : 0;
    if (!want || gso->u.gso.size == 0)
        return fail(why, "GSO extra-info of an unknown type or without a segment size");
    if (l.proto != NET_PROTO_TCP || l.ipver != want)
        return fail(why, "GSO type does not match the packet's headers");
    h->gso_type = want == 4 ? VIRTIO_NET_HDR_GSO_TCPV4 : VIRTIO_NET_HDR_GSO_TCPV6;
    h->gso_size = gso->u.gso.size;
    h->hdr_len = (uint16_t)(l.l4_off + l.l4_hlen);
    return 0;
}
