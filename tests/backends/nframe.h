/* nframe.h - Ethernet/IPv4 UDP and TCP frames built and parsed by hand for
 * the network tests (the test frontend, the hostile frontend, the peer
 * program). Checksums use common/inet_csum.h, as netback does; that code is
 * itself checked against kernel-made frames (tests/unit/test-common-inet-csum.c),
 * and the parsing here is this file's own.
 * Payloads carry a sequence number and a pattern derived from it, so a
 * receiver can check every byte.
 */
#ifndef NFRAME_H
#define NFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NFR_ETH    14u
#define NFR_IP     20u
#define NFR_IP6    40u
#define NFR_UDP    8u
#define NFR_TCP    20u
#define NFR_MAGIC  0x55534e54u /* "USNT" */
#define NFR_PAYMIN 8u          /* magic and sequence number */

struct nfr_end {
    uint8_t mac[6];
    uint8_t ip[4];
    uint8_t ip6[16]; /* for the IPv6 frames */
    uint16_t port;
};

/* Payload of len (>= NFR_PAYMIN) bytes for seq; check one (sets *seq). */
void nfr_payload(uint8_t *p, size_t len, uint32_t seq);
bool nfr_payload_ok(const uint8_t *p, size_t len, uint32_t *seq);
/* The pattern byte at stream offset off (for TCP streams split by GSO). */
uint8_t nfr_stream_byte(uint64_t off);

/* An Ethernet/IPv4/UDP frame with a paylen-byte payload for seq; the UDP
 * checksum complete, or (partial) only the pseudo-header sum in it, as a
 * checksum-offloading stack leaves it. Returns the frame length, 0 if cap
 * is too small. */
size_t nfr_udp(uint8_t *f, size_t cap, const struct nfr_end *src, const struct nfr_end *dst,
               uint32_t seq, size_t paylen, bool partial);
/* The same over IPv6 (ip6 of the two ends; no extension headers). */
size_t nfr_udp6(uint8_t *f, size_t cap, const struct nfr_end *src, const struct nfr_end *dst,
                uint32_t seq, size_t paylen, bool partial);
/* An Ethernet/IPv4/TCP frame (ACK|PSH) carrying stream bytes
 * [tcpseq, tcpseq+paylen) of nfr_stream_byte; the checksum partial. */
size_t nfr_tcp(uint8_t *f, size_t cap, const struct nfr_end *src, const struct nfr_end *dst,
               uint32_t tcpseq, size_t paylen);

struct nfr_info {
    unsigned ipver; /* 4 or 6 */
    unsigned proto; /* 17 UDP, 6 TCP, 0 other */
    const uint8_t *payload;
    size_t paylen;
    uint16_t sport, dport;
    uint32_t tcpseq;
    bool ip_ok;      /* IPv4 header checksum and lengths (IPv6: lengths) */
    bool l4_csum_ok; /* UDP/TCP checksum (a UDP checksum of 0 counts as ok) */
};
/* Parse an Ethernet/IPv4 frame, or an Ethernet/IPv6 frame without extension
 * headers; -1 if it is neither. */
int nfr_parse(const uint8_t *f, size_t len, struct nfr_info *in);

/* "aa:bb:cc:dd:ee:ff" and "a.b.c.d"; 0 or -1. */
int nfr_parse_mac(const char *s, uint8_t mac[6]);
int nfr_parse_ip(const char *s, uint8_t ip[4]);

#endif
