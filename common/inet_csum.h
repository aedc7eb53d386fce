/* inet_csum.h - the Internet checksum (RFC 1071) as TCP, UDP and IPv4 use
 * it: a running ones'-complement sum of 16-bit big-endian words, the
 * pseudo-headers of RFC 768/793 (IPv4) and RFC 8200 (IPv6), and completing a
 * checksum an offloading stack left partial. Pure; no allocation.
 *
 * Errors (see common/README.md): -1 with errno, nothing logged.
 */
#ifndef UNDERSTUDY_INET_CSUM_H
#define UNDERSTUDY_INET_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* sum plus the ones'-complement sum of len bytes at p (not folded). Chunks
 * summed one after another must each have an even length, but the last. */
uint32_t inet_csum_add(uint32_t sum, const void *p, size_t len);
/* sum folded to 16 bits (not complemented). */
uint16_t inet_csum_fold(uint32_t sum);
/* The checksum to store for data whose sum is sum: ~fold(sum). A field over
 * correct data (the checksum included) sums to 0xffff, so this gives 0. */
uint16_t inet_csum_finish(uint32_t sum);

/* Pseudo-header sums (not folded) for an L4 segment of l4len bytes of
 * protocol proto (6 TCP, 17 UDP) between the given addresses. */
uint32_t inet_csum_pseudo4(const uint8_t src[4], const uint8_t dst[4], unsigned proto,
                           uint32_t l4len);
uint32_t inet_csum_pseudo6(const uint8_t src[16], const uint8_t dst[16], unsigned proto,
                           uint32_t l4len);

/* Complete a partial checksum as hardware would: the 16-bit field at
 * start + off holds the pseudo-header sum; the checksum of [start, len)
 * replaces it (0 stored as 0xffff, the same value in ones' complement: UDP
 * reserves 0 for "no checksum"). 0, or -1 with errno ERANGE if the field is
 * not inside the frame. */
int inet_csum_complete(uint8_t *p, size_t len, size_t start, size_t off);

#endif
