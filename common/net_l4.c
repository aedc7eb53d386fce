/* net_l4.c - locating L4 headers in Ethernet frames (see net_l4.h). */
#define _GNU_SOURCE
#include "net_l4.h"

#include <errno.h>

#define IPV6_HLEN        40u
#define IPV6_HOP_BY_HOP  0u
#define IPV6_ROUTING     43u
#define IPV6_FRAGMENT    44u
#define IPV6_DEST_OPTS   60u
#define IPV6_MAX_EXTHDRS 8 /* more than any sane packet has; bounds the walk */

static unsigned be16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

static int refuse(const char **why, const char *what)
{
    *why = what;
    errno = EINVAL;
    return -1;
}

static int l4_header(const uint8_t *p, size_t len, unsigned off, unsigned proto, struct net_l4 *l,
                     const char **why)
{
    l->proto = proto;
    l->l4_off = off;
    if (proto == NET_PROTO_UDP) {
        l->l4_hlen = 8;
        l->csum_off = 6;
    } else if (proto == NET_PROTO_TCP) {
        if (off + 20 > len)
            return refuse(why, "truncated TCP header");
        l->l4_hlen = (p[off + 12] >> 4) * 4u;
        l->csum_off = 16;
        if (l->l4_hlen < 20)
            return refuse(why, "TCP data offset below 5");
    } else {
        return refuse(why, "not TCP or UDP");
    }
    if (off + l->l4_hlen > len)
        return refuse(why, "truncated TCP/UDP header");
    return 0;
}

static int ipv4(const uint8_t *p, size_t len, unsigned off, struct net_l4 *l, const char **why)
{
    if (off + 20 > len || (p[off] >> 4) != 4)
        return refuse(why, "truncated or malformed IPv4 header");
    unsigned ihl = (p[off] & 0xfu) * 4u;
    if (ihl < 20 || off + ihl > len)
        return refuse(why, "bad IPv4 header length");
    if (be16(p + off + 6) & 0x3fffu) /* more-fragments flag or a fragment offset */
        return refuse(why, "IPv4 fragment");
    l->ipver = 4;
    return l4_header(p, len, off + ihl, p[off + 9], l, why);
}

static int ipv6(const uint8_t *p, size_t len, unsigned off, struct net_l4 *l, const char **why)
{
    if (off + IPV6_HLEN > len || (p[off] >> 4) != 6)
        return refuse(why, "truncated or malformed IPv6 header");
    l->ipver = 6;
    unsigned next = p[off + 6];
    off += IPV6_HLEN;
    /* Each of these is (length + 1) * 8 bytes, its next header first. */
    for (int n = 0; n < IPV6_MAX_EXTHDRS &&
                    (next == IPV6_HOP_BY_HOP || next == IPV6_ROUTING || next == IPV6_DEST_OPTS);
         n++) {
        if (off + 8 > len)
            return refuse(why, "truncated IPv6 extension header");
        next = p[off];
        off += (p[off + 1] + 1u) * 8u;
    }
    if (next == IPV6_FRAGMENT)
        return refuse(why, "IPv6 fragment");
    return l4_header(p, len, off, next, l, why);
}

unsigned net_l3(const uint8_t *p, size_t len, unsigned *l3_off)
{
    if (len < NET_ETH_HLEN)
        return 0;
    unsigned type = be16(p + 12);
    *l3_off = NET_ETH_HLEN;
    if (type == NET_ETHERTYPE_VLAN || type == NET_ETHERTYPE_QINQ) {
        if (len < NET_ETH_HLEN + NET_VLAN_HLEN)
            return 0;
        type = be16(p + 16);
        *l3_off += NET_VLAN_HLEN;
    }
    return type;
}

int net_l4(const uint8_t *p, size_t len, struct net_l4 *l, const char **why)
{
    if (len < NET_ETH_HLEN)
        return refuse(why, "shorter than an Ethernet header");
    unsigned tag = be16(p + 12);
    if ((tag == NET_ETHERTYPE_VLAN || tag == NET_ETHERTYPE_QINQ) &&
        len < NET_ETH_HLEN + NET_VLAN_HLEN)
        return refuse(why, "truncated VLAN tag");
    unsigned off;
    unsigned type = net_l3(p, len, &off);
    l->l3_off = off;
    if (type == NET_ETHERTYPE_IPV4)
        return ipv4(p, len, off, l, why);
    if (type == NET_ETHERTYPE_IPV6)
        return ipv6(p, len, off, l, why);
    return refuse(why, "not IPv4 or IPv6");
}
