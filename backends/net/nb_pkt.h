/* nb_pkt.h - just enough Ethernet/IP parsing to place a checksum or a
 * segmentation offload: where the TCP or UDP header starts, and the
 * Internet checksum (RFC 1071) to complete one in software. Pure; every
 * offset is checked against the packet's length.
 */
#ifndef NB_PKT_H
#define NB_PKT_H

#include <stddef.h>
#include <stdint.h>

#define NB_ETH_HLEN  14u
#define NB_PROTO_TCP 6u
#define NB_PROTO_UDP 17u

struct nb_l4 {
    unsigned ipver;    /* 4 or 6 */
    unsigned proto;    /* NB_PROTO_TCP or NB_PROTO_UDP */
    unsigned l4_off;   /* offset of the TCP/UDP header in the frame */
    unsigned l4_hlen;  /* its length (TCP: data offset; UDP: 8) */
    unsigned csum_off; /* offset of the checksum field within it */
};

/* Locate the TCP or UDP header of an IPv4/IPv6 frame (one 802.1Q tag and
 * the IPv6 hop-by-hop, routing and destination-options headers allowed).
 * 0, or -1 with *why: not TCP/UDP over IP, a fragment, or truncated. */
int nb_pkt_l4(const uint8_t *p, size_t len, struct nb_l4 *l, const char **why);

/* Ones'-complement sum of len bytes added to sum (not folded). */
uint32_t nb_csum_add(uint32_t sum, const uint8_t *p, size_t len);
uint16_t nb_csum_fold(uint32_t sum);

/* Complete a partial checksum in software, as hardware would: the 16-bit
 * field at start + off holds the pseudo-header sum; the sum of [start,len)
 * complemented replaces it (0 becomes 0xffff). 0, or -1 if out of range. */
int nb_csum_complete(uint8_t *p, size_t len, unsigned start, unsigned off);

#endif
