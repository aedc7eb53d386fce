/* net_l4.h - just enough Ethernet/IP parsing to place a checksum or a
 * segmentation offload: the frame's network protocol, where its TCP or UDP
 * header starts, how long that is and where its checksum field sits. Both
 * ends of netif use it (netback and the shadow netfront), on frames a guest
 * or the network sent: every offset is checked against the frame's length.
 * Pure; no allocation.
 *
 * Errors (see common/README.md): -1 with errno EINVAL, and *why a static
 * phrase for the caller's message ("IPv4 fragment").
 */
#ifndef UNDERSTUDY_NET_L4_H
#define UNDERSTUDY_NET_L4_H

#include <stddef.h>
#include <stdint.h>

#define NET_ETH_HLEN       14u
#define NET_VLAN_HLEN      4u
#define NET_ETHERTYPE_IPV4 0x0800u
#define NET_ETHERTYPE_IPV6 0x86ddu
#define NET_ETHERTYPE_VLAN 0x8100u /* 802.1Q */
#define NET_ETHERTYPE_QINQ 0x88a8u /* 802.1ad: its outer tag */
#define NET_PROTO_TCP      6u
#define NET_PROTO_UDP      17u

struct net_l4 {
    unsigned l3_off;   /* offset of the IP header (after one VLAN tag, if any) */
    unsigned ipver;    /* 4 or 6 */
    unsigned proto;    /* NET_PROTO_TCP or NET_PROTO_UDP */
    unsigned l4_off;   /* offset of the TCP/UDP header in the frame */
    unsigned l4_hlen;  /* its length (TCP: data offset; UDP: 8) */
    unsigned csum_off; /* offset of the checksum field within it */
};

/* The frame's ethertype after at most one VLAN tag, and in *l3_off where its
 * payload starts; 0 if the frame is too short for its Ethernet header. */
unsigned net_l3(const uint8_t *p, size_t len, unsigned *l3_off);

/* Locate the TCP or UDP header of an IPv4/IPv6 frame (one VLAN tag and the
 * IPv6 hop-by-hop, routing and destination-options headers allowed). 0, or
 * -1 (EINVAL) with *why: not TCP/UDP over IP, a fragment, or truncated. */
int net_l4(const uint8_t *p, size_t len, struct net_l4 *l, const char **why);

#endif
