/* test-common-net-l4.c - T0 tests of L4 header location in Ethernet frames
 * (common/net_l4.c): VLAN tags, IPv4 options, IPv6 extension headers, and
 * every way a frame can be refused. */
#define _GNU_SOURCE
#include "check.h"
#include "net_l4.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static uint8_t F[2048];

/* Ethernet (optionally one VLAN tag) + IPv4 (ihl words) + TCP/UDP, len bytes. */
static size_t v4(unsigned tag, unsigned ihl, unsigned proto, size_t paylen)
{
    memset(F, 0, sizeof(F));
    size_t o = 12;
    if (tag) {
        F[o] = (uint8_t)(tag >> 8);
        F[o + 1] = (uint8_t)tag;
        o += 4;
    }
    F[o] = 0x08;
    F[o + 1] = 0x00;
    o += 2;
    size_t ip = o, l4len = (proto == 6 ? 20 : 8) + paylen;
    F[ip] = (uint8_t)(0x40 | ihl);
    F[ip + 2] = (uint8_t)((ihl * 4 + l4len) >> 8);
    F[ip + 3] = (uint8_t)(ihl * 4 + l4len);
    F[ip + 8] = 64;
    F[ip + 9] = (uint8_t)proto;
    size_t l4 = ip + ihl * 4;
    if (proto == 6)
        F[l4 + 12] = 5 << 4;
    return l4 + l4len;
}

static void refused(size_t len, const char *want)
{
    struct net_l4 l;
    const char *why = NULL;
    errno = 0;
    CHECK_EQ(net_l4(F, len, &l, &why), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK(why && strcmp(why, want) == 0);
    if (why && strcmp(why, want) != 0)
        fprintf(stderr, "  why: '%s', wanted '%s'\n", why, want);
}

static void test_ipv4(void)
{
    struct net_l4 l;
    const char *why = NULL;
    size_t n = v4(0, 5, 17, 100);
    CHECK_EQ(net_l4(F, n, &l, &why), 0);
    CHECK_EQ(l.l3_off, 14);
    CHECK_EQ(l.ipver, 4);
    CHECK_EQ(l.proto, NET_PROTO_UDP);
    CHECK_EQ(l.l4_off, 34);
    CHECK_EQ(l.l4_hlen, 8);
    CHECK_EQ(l.csum_off, 6);
    n = v4(NET_ETHERTYPE_VLAN, 6, 6, 100); /* VLAN, IP options */
    CHECK_EQ(net_l4(F, n, &l, &why), 0);
    CHECK_EQ(l.l3_off, 18);
    CHECK_EQ(l.l4_off, 14 + 4 + 24);
    CHECK_EQ(l.l4_hlen, 20);
    CHECK_EQ(l.csum_off, 16);
    n = v4(NET_ETHERTYPE_QINQ, 5, 6, 0); /* 802.1ad outer tag */
    CHECK_EQ(net_l4(F, n, &l, &why), 0);
    CHECK_EQ(l.l4_off, 14 + 4 + 20);
    F[14 + 4 + 20 + 12] = 8 << 4; /* TCP options: 32 bytes of header */
    CHECK_EQ(net_l4(F, 14 + 4 + 20 + 32, &l, &why), 0);
    CHECK_EQ(l.l4_hlen, 32);
    refused(14 + 4 + 20 + 31, "truncated TCP/UDP header");
    v4(NET_ETHERTYPE_VLAN, 6, 6, 100);
    refused(14 + 4 + 24 + 19, "truncated TCP header");
    n = v4(0, 5, 17, 0);
    refused(n - 1, "truncated TCP/UDP header");
    n = v4(0, 4, 17, 10);
    refused(n, "bad IPv4 header length"); /* ihl below 5 */
    v4(0, 15, 17, 10);
    refused(14 + 30, "bad IPv4 header length"); /* ihl past the frame */
    refused(14 + 19, "truncated or malformed IPv4 header");
    n = v4(0, 5, 17, 10);
    F[14] = 0x65; /* version 6 in an IPv4 ethertype */
    refused(n, "truncated or malformed IPv4 header");
    n = v4(0, 5, 17, 10);
    F[14 + 6] = 0x20; /* more fragments */
    refused(n, "IPv4 fragment");
    n = v4(0, 5, 17, 10);
    F[14 + 7] = 0x01; /* a fragment offset */
    refused(n, "IPv4 fragment");
    n = v4(0, 5, 17, 10);
    F[14 + 6] = 0x40; /* DF alone is fine */
    CHECK_EQ(net_l4(F, n, &l, &why), 0);
    n = v4(0, 5, 1, 10); /* ICMP */
    refused(n, "not TCP or UDP");
    n = v4(0, 5, 6, 10);
    F[34 + 12] = 4 << 4;
    refused(n, "TCP data offset below 5");
}

static void test_ethernet(void)
{
    size_t n = v4(0, 5, 17, 10);
    refused(13, "shorter than an Ethernet header");
    F[12] = 0x08, F[13] = 0x06; /* ARP */
    refused(n, "not IPv4 or IPv6");
    F[12] = 0, F[13] = 0; /* an 802.3 length field */
    refused(n, "not IPv4 or IPv6");
    v4(NET_ETHERTYPE_VLAN, 5, 17, 10);
    refused(17, "truncated VLAN tag");
    unsigned off = 0;
    CHECK_EQ(net_l3(F, 17, &off), 0);
    CHECK_EQ(net_l3(F, 18, &off), NET_ETHERTYPE_IPV4);
    CHECK_EQ(off, 18);
    v4(0, 5, 17, 10);
    CHECK_EQ(net_l3(F, 14, &off), NET_ETHERTYPE_IPV4);
    CHECK_EQ(off, 14);
    CHECK_EQ(net_l3(F, 13, &off), 0);
}

static void test_ipv6(void)
{
    struct net_l4 l;
    const char *why = NULL;
    /* IPv6, UDP right after the fixed header. */
    memset(F, 0, sizeof(F));
    F[12] = 0x86, F[13] = 0xdd, F[14] = 0x60, F[14 + 6] = 17;
    CHECK_EQ(net_l4(F, 54 + 8, &l, &why), 0);
    CHECK_EQ(l.ipver, 6);
    CHECK_EQ(l.l4_off, 54);
    refused(53, "truncated or malformed IPv6 header");
    F[14] = 0x40;
    refused(54 + 8, "truncated or malformed IPv6 header");
    /* Hop-by-hop, then destination options (16 bytes), then TCP. */
    memset(F, 0, sizeof(F));
    F[12] = 0x86, F[13] = 0xdd, F[14] = 0x60, F[14 + 6] = 0;
    F[54] = 60, F[55] = 0;
    F[62] = 6, F[63] = 1;
    F[78 + 12] = 5 << 4;
    CHECK_EQ(net_l4(F, 78 + 20, &l, &why), 0);
    CHECK_EQ(l.l4_off, 78);
    CHECK_EQ(l.proto, NET_PROTO_TCP);
    CHECK_EQ(l.csum_off, 16);
    refused(78 + 19, "truncated TCP header");
    F[63] = 200; /* an extension header running past the frame: no room for TCP */
    refused(78 + 20, "truncated TCP header");
    F[63] = 1, F[62] = 44; /* then a fragment header */
    refused(78 + 20, "IPv6 fragment");
    refused(54 + 7, "truncated IPv6 extension header");
    /* A chain longer than the walk's bound ends on a header that is not L4. */
    memset(F, 0, sizeof(F));
    F[12] = 0x86, F[13] = 0xdd, F[14] = 0x60;
    refused(54 + 9 * 8 + 20, "not TCP or UDP");
}

int main(void)
{
    test_ipv4();
    test_ethernet();
    test_ipv6();
    return check_done("test-common-net-l4");
}
