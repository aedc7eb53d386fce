/* net-offload-test - unit tests of the netfront's offload conversions
 * (nf_offload.c, over common/net_l4.c and inet_csum.c): partial checksums
 * completed in software match a checksum computed the slow way; tx headers become netif flags and
 * GSO extra-info only where the backend takes them; rx flags and GSO extra-info become the
 * virtio_net_hdr the TAP needs, and what does not match the packet is
 * refused. Pure C, no Xen. */
#define _GNU_SOURCE
#include "inet_csum.h"
#include "nf_offload.h"

#include <linux/if_tun.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

/* An IPv4 TCP frame: Ethernet, a 20-byte IP header, a 20-byte TCP header, payload. */
static unsigned tcp4(uint8_t *f, unsigned payload)
{
    memset(f, 0, 14 + 40 + payload);
    f[12] = 0x08;
    uint8_t *ip = f + 14;
    ip[0] = 0x45;
    unsigned tot = 40 + payload;
    ip[2] = (uint8_t)(tot >> 8);
    ip[3] = (uint8_t)tot;
    ip[8] = 64;
    ip[9] = 6;
    memcpy(ip + 12, "\x0a\x00\x00\x02\x0a\x00\x00\x01", 8);
    uint8_t *tcp = ip + 20;
    tcp[12] = 5 << 4;
    for (unsigned i = 0; i < payload; i++)
        tcp[20 + i] = (uint8_t)(i * 7 + 3);
    return 14 + tot;
}

/* The TCP checksum of an IPv4 frame, computed the slow way. */
static uint16_t slow_csum(const uint8_t *f, unsigned len)
{
    const uint8_t *ip = f + 14;
    unsigned l4 = len - 34;
    uint32_t s = 0;
    for (unsigned i = 12; i < 20; i += 2)
        s += (uint32_t)ip[i] << 8 | ip[i + 1];
    s += 6 + l4;
    for (unsigned i = 0; i < l4; i += 2) {
        if (i == 16)
            continue; /* the checksum field itself */
        s += (uint32_t)f[34 + i] << 8 | (i + 1 < l4 ? f[34 + i + 1] : 0);
    }
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

/* Put the pseudo-header sum in the checksum field, as a partial checksum leaves it. */
static void pseudo(uint8_t *f, unsigned len)
{
    const uint8_t *ip = f + 14;
    uint32_t s = 6 + (len - 34);
    for (unsigned i = 12; i < 20; i += 2)
        s += (uint32_t)ip[i] << 8 | ip[i + 1];
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    f[34 + 16] = (uint8_t)(s >> 8);
    f[34 + 17] = (uint8_t)s;
}

static void test_csum(void)
{
    static uint8_t f[2000];
    for (unsigned payload = 0; payload < 40; payload += 13) {
        unsigned len = tcp4(f, payload);
        uint16_t want = slow_csum(f, len);
        pseudo(f, len);
        CHECK(inet_csum_complete(f, len, 34, 16) == 0);
        uint16_t got = (uint16_t)(f[50] << 8 | f[51]);
        CHECK(got == want || (want == 0 && got == 0xffff));
    }
    CHECK(inet_csum_complete(f, 60, 59, 0) < 0);
    CHECK(inet_csum_complete(f, 60, 50, 9) < 0);
    CHECK(inet_csum_complete(f, 60, 61, 0) < 0);
}

static void test_tx(void)
{
    static uint8_t f[2000];
    unsigned len = tcp4(f, 100);
    struct virtio_net_hdr h = {
        .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 34, .csum_offset = 16};
    struct nf_txcaps all = {.csum6 = true, .gso4 = true, .gso6 = true}, none = {0};
    uint16_t flags;
    netif_extra_info_t g;
    bool has;
    const char *why;
    CHECK(nf_off_tx(&h, f, len, &all, &flags, &g, &has, &why) == 0);
    CHECK(flags == (NETTXF_csum_blank | NETTXF_data_validated) && !has);
    /* IPv4 checksum offload is netif's default: blank even without caps. */
    CHECK(nf_off_tx(&h, f, len, &none, &flags, &g, &has, &why) == 0 && (flags & NETTXF_csum_blank));
    h.csum_start = (uint16_t)(len - 1);
    CHECK(nf_off_tx(&h, f, len, &all, &flags, &g, &has, &why) < 0);
    h.csum_start = 34;
    h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
    h.gso_size = 1448;
    CHECK(nf_off_tx(&h, f, len, &all, &flags, &g, &has, &why) == 0 && has);
    CHECK(g.type == XEN_NETIF_EXTRA_TYPE_GSO && g.u.gso.type == XEN_NETIF_GSO_TYPE_TCPV4 &&
          g.u.gso.size == 1448);
    CHECK(nf_off_tx(&h, f, len, &none, &flags, &g, &has, &why) < 0); /* no GSO in the backend */
    h.gso_size = 0;
    CHECK(nf_off_tx(&h, f, len, &all, &flags, &g, &has, &why) < 0);
    CHECK((nf_off_tun_flags(&all) & (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6)) ==
          (TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6));
    CHECK(nf_off_tun_flags(&none) == TUN_F_CSUM);
}

static void test_rx(void)
{
    static uint8_t f[2000];
    unsigned len = tcp4(f, 100);
    struct virtio_net_hdr h;
    const char *why;
    CHECK(nf_off_rx(0, NULL, f, len, &h, &why) == 0 && h.flags == 0);
    CHECK(nf_off_rx(NETRXF_data_validated, NULL, f, len, &h, &why) == 0 &&
          h.flags == VIRTIO_NET_HDR_F_DATA_VALID);
    CHECK(nf_off_rx(NETRXF_csum_blank | NETRXF_data_validated, NULL, f, len, &h, &why) == 0);
    CHECK(h.flags == VIRTIO_NET_HDR_F_NEEDS_CSUM && h.csum_start == 34 && h.csum_offset == 16);
    netif_extra_info_t g = {.type = XEN_NETIF_EXTRA_TYPE_GSO};
    g.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
    g.u.gso.size = 1448;
    CHECK(nf_off_rx(NETRXF_csum_blank, &g, f, len, &h, &why) == 0);
    CHECK(h.gso_type == VIRTIO_NET_HDR_GSO_TCPV4 && h.gso_size == 1448 && h.hdr_len == 54);
    CHECK(nf_off_rx(0, &g, f, len, &h, &why) < 0); /* GSO needs a partial checksum */
    g.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV6;
    CHECK(nf_off_rx(NETRXF_csum_blank, &g, f, len, &h, &why) < 0);  /* not an IPv6 packet */
    CHECK(nf_off_rx(NETRXF_csum_blank, NULL, f, 40, &h, &why) < 0); /* truncated headers */
    f[12] = 0x08;
    f[13] = 0x06; /* ARP: nothing to checksum */
    CHECK(nf_off_rx(NETRXF_csum_blank, NULL, f, len, &h, &why) < 0);
}

int main(void)
{
    test_csum();
    test_tx();
    test_rx();
    return check_done("net-offload-test");
}
