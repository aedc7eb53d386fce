/* net_vnet.h - a netif packet's offload request as a virtio_net_hdr: what
 * both ends of netif hand to a TAP with IFF_VNET_HDR (netback for what a
 * guest transmits, the shadow netfront for what its backend delivers). The
 * netif side says "checksum left blank" (NETTXF_/NETRXF_csum_blank; the two
 * rings give it different bits, so callers pass a bool) and maybe a GSO
 * extra-info; the header says where the checksum goes and how to segment.
 * Pure; no allocation.
 *
 * Errors (see common/README.md): -1 with errno EINVAL, and *why a static
 * phrase for the caller's message.
 */
#ifndef UNDERSTUDY_NET_VNET_H
#define UNDERSTUDY_NET_VNET_H

#include <linux/virtio_net.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xen/io/netif.h>

/* Fill *h for a frame of len bytes. csum_blank: its L4 checksum is a partial
 * (pseudo-header) sum to complete; data_valid: its checksum is known good;
 * gso: its GSO extra-info, or NULL. A GSO frame must have csum_blank, a GSO
 * type of TCPv4/TCPv6 that matches its headers, and a segment size. */
int net_vnet_from_netif(bool csum_blank, bool data_valid, const netif_extra_info_t *gso,
                        const uint8_t *frame, size_t len, struct virtio_net_hdr *h,
                        const char **why);

#endif
