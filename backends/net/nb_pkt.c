/* nb_pkt.c - locating L4 headers; Internet checksums. */
#define _GNU_SOURCE
#include "nb_pkt.h"

static unsigned be16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

static int l4_header(const uint8_t *p, size_t len, unsigned off, unsigned proto, struct nb_l4 *l,
                     const char **why)
{
    l->proto = proto;
    l->l4_off = off;
    if (proto == NB_PROTO_UDP) {
        l->l4_hlen = 8;
        l->csum_off = 6;
    } else if (proto == NB_PROTO_TCP) {
        if (off + 20 > len) {
            *why = "truncated TCP header";
            return -1;
        }
        l->l4_hlen = (p[off + 12] >> 4) * 4u;
        l->csum_off = 16;
        if (l->l4_hlen < 20) {
            *why = "TCP data offset below 5";
            return -1;
        }
    } else {
        *why = "not TCP or UDP";
        return -1;
    }
    if (off + l->l4_hlen > len) {
        *why = "truncated TCP/UDP header";
        return -1;
    }
    return 0;
}

static int ipv4(const uint8_t *p, size_t len, unsigned off, struct nb_l4 *l, const char **why)
{
    if (off + 20 > len || (p[off] >> 4) != 4) {
        *why = "truncated or malformed IPv4 header";
        return -1;
    }
    unsigned ihl = (p[off] & 0xfu) * 4u;
    if (ihl < 20 || off + ihl > len) {
        *why = "bad IPv4 header length";
        return -1;
    }
    if (be16(p + off + 6) & 0x3fffu) {
        *why = "IPv4 fragment";
        return -1;
    }
    l->ipver = 4;
    return l4_header(p, len, off + ihl, p[off + 9], l, why);
}

static int ipv6(const uint8_t *p, size_t len, unsigned off, struct nb_l4 *l, const char **why)
{
    if (off + 40 > len || (p[off] >> 4) != 6) {
        *why = "truncated or malformed IPv6 header";
        return -1;
    }
    l->ipver = 6;
    unsigned next = p[off + 6];
    off += 40;
    /* Hop-by-hop (0), routing (43), destination options (60): (len + 1) * 8 bytes each. */
    for (int n = 0; n < 8 && (next == 0 || next == 43 || next == 60); n++) {
        if (off + 8 > len) {
            *why = "truncated IPv6 extension header";
            return -1;
        }
        next = p[off];
        off += (p[off + 1] + 1u) * 8u;
    }
    if (next == 44) {
        *why = "IPv6 fragment";
        return -1;
    }
    return l4_header(p, len, off, next, l, why);
}

int nb_pkt_l4(const uint8_t *p, size_t len, struct nb_l4 *l, const char **why)
{
    if (len < NB_ETH_HLEN) {
        *why = "shorter than an Ethernet header";
        return -1;
    }
    unsigned off = 12, type = be16(p + off);
    if (type == 0x8100 || type == 0x88a8) {
        if (len < NB_ETH_HLEN + 4) {
            *why = "truncated VLAN tag";
            return -1;
        }
        off += 4;
        type = be16(p + off);
    }
    off += 2;
    if (type == 0x0800)
        return ipv4(p, len, off, l, why);
    if (type == 0x86dd)
        return ipv6(p, len, off, l, why);
    *why = "not IPv4 or IPv6";
    return -1;
}

uint32_t nb_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
    uint64_t s = sum;
    size_t i = 0;
    for (; i + 1 < len; i += 2)
        s += (uint32_t)p[i] << 8 | p[i + 1];
    if (i < len)
        s += (uint32_t)p[i] << 8;
    while (s >> 32)
        s = (s & 0xffffffffu) + (s >> 32);
    return (uint32_t)s;
}

uint16_t nb_csum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffffu) + (sum >> 16);
    return (uint16_t)sum;
}

int nb_csum_complete(uint8_t *p, size_t len, unsigned start, unsigned off)
{
    if (start > len || off > len - start || len - start - off < 2)
        return -1;
    uint16_t c = (uint16_t)~nb_csum_fold(nb_csum_add(0, p + start, len - start));
    if (c == 0)
        c = 0xffff;
    p[start + off] = (uint8_t)(c >> 8);
    p[start + off + 1] = (uint8_t)c;
    return 0;
}
