/* nb_vnet_test - the netif offload flags <-> virtio_net_hdr conversions
 * (nb_vnet.c). L4 header location and checksums have their own tests
 * (tests/unit/test-common-net-l4.c, test-common-inet-csum.c). */
#define _GNU_SOURCE
#include "check.h"
#include "nb_vnet.h"

#include <linux/if_tun.h>
#include <string.h>

static uint8_t F[2048];

/* Ethernet (optionally one VLAN tag) + IPv4 (ihl words) + TCP/UDP, len bytes. */
static size_t v4(bool vlan, unsigned ihl, unsigned proto, size_t paylen)
{
    memset(F, 0, sizeof(F));
    size_t o = 12;
    if (vlan) {
        F[o] = 0x81;
        F[o + 1] = 0x00;
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
    F[ip + 12] = 10, F[ip + 15] = 1, F[ip + 16] = 10, F[ip + 19] = 2;
    size_t l4 = ip + ihl * 4;
    if (proto == 6)
        F[l4 + 12] = 5 << 4;
    for (size_t i = 0; i < paylen; i++)
        F[l4 + (proto == 6 ? 20 : 8) + i] = (uint8_t)(i * 7 + 1);
    return l4 + l4len;
}

static void test_from_tx(void)
{
    struct nb_txpkt p;
    struct virtio_net_hdr h;
    const char *why = NULL;
    size_t n = v4(false, 5, 6, 1000);
    memset(&p, 0, sizeof(p));
    CHECK_EQ(nb_vnet_from_tx(&p, F, n, &h, &why), 0);
    CHECK_EQ(h.flags, 0);
    p.flags = NETTXF_csum_blank;
    CHECK_EQ(nb_vnet_from_tx(&p, F, n, &h, &why), 0);
    CHECK_EQ(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
    CHECK_EQ(h.csum_start, 34);
    CHECK_EQ(h.csum_offset, 16);
    CHECK_EQ(h.gso_type, VIRTIO_NET_HDR_GSO_NONE);
    p.extras = 1u << XEN_NETIF_EXTRA_TYPE_GSO;
    p.extra[XEN_NETIF_EXTRA_TYPE_GSO].u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
    p.extra[XEN_NETIF_EXTRA_TYPE_GSO].u.gso.size = 1448;
    CHECK_EQ(nb_vnet_from_tx(&p, F, n, &h, &why), 0);
    CHECK_EQ(h.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
    CHECK_EQ(h.gso_size, 1448);
    CHECK_EQ(h.hdr_len, 54);
    p.extra[XEN_NETIF_EXTRA_TYPE_GSO].u.gso.type = XEN_NETIF_GSO_TYPE_TCPV6;
    CHECK_EQ(nb_vnet_from_tx(&p, F, n, &h, &why), -1); /* v6 GSO on a v4 frame */
    n = v4(false, 5, 17, 1000);
    p.extra[XEN_NETIF_EXTRA_TYPE_GSO].u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
    CHECK_EQ(nb_vnet_from_tx(&p, F, n, &h, &why), -1); /* TCP GSO on UDP */
    p.extras = 0;
    F[12] = 0x08, F[13] = 0x06;
    CHECK_EQ(nb_vnet_from_tx(&p, F, n, &h, &why), -1); /* partial checksum on ARP */
    p.flags = NETTXF_data_validated;
    CHECK_EQ(nb_vnet_from_tx(&p, F, n, &h, &why), 0);
    CHECK_EQ(h.flags, VIRTIO_NET_HDR_F_DATA_VALID);
}

static void test_to_rx(void)
{
    struct nb_rxcaps all = {.sg = true, .csum4 = true, .csum6 = true, .gso4 = true, .gso6 = true};
    struct nb_rxcaps none = {0};
    struct nb_rxmeta m;
    struct virtio_net_hdr h;
    const char *why = NULL;
    CHECK_EQ(nb_vnet_tun_offloads(&all), TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6);
    CHECK_EQ(nb_vnet_tun_offloads(&none), TUN_F_CSUM);
    size_t n = v4(false, 5, 17, 300);
    memset(&h, 0, sizeof(h));
    h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
    h.csum_start = 34;
    h.csum_offset = 6;
    CHECK_EQ(nb_vnet_to_rx(&h, F, n, &all, &m, &why), 0);
    CHECK_EQ(m.flags, NETRXF_csum_blank | NETRXF_data_validated);
    /* A frontend that takes no partial checksums gets it completed. */
    CHECK_EQ(nb_vnet_to_rx(&h, F, n, &none, &m, &why), 0);
    CHECK_EQ(m.flags, NETRXF_data_validated);
    CHECK((F[40] | F[41]) != 0);
    h.csum_start = 2000; /* offsets outside the frame */
    CHECK_EQ(nb_vnet_to_rx(&h, F, n, &none, &m, &why), -1);
    memset(&h, 0, sizeof(h));
    h.flags = VIRTIO_NET_HDR_F_DATA_VALID;
    CHECK_EQ(nb_vnet_to_rx(&h, F, n, &none, &m, &why), 0);
    CHECK_EQ(m.flags, NETRXF_data_validated);
    /* TSO */
    n = v4(false, 5, 6, 1000);
    memset(&h, 0, sizeof(h));
    h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
    h.csum_start = 34;
    h.csum_offset = 16;
    h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
    h.gso_size = 500;
    CHECK_EQ(nb_vnet_to_rx(&h, F, n, &all, &m, &why), 0);
    CHECK_EQ(m.gso_type, XEN_NETIF_GSO_TYPE_TCPV4);
    CHECK_EQ(m.gso_size, 500);
    CHECK_EQ(nb_vnet_to_rx(&h, F, n, &none, &m, &why), -1);
    h.gso_size = 0;
    CHECK_EQ(nb_vnet_to_rx(&h, F, n, &all, &m, &why), -1);
    h.gso_size = 500;
    h.flags = 0;
    CHECK_EQ(nb_vnet_to_rx(&h, F, n, &all, &m, &why), -1);
    h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
    h.gso_type = VIRTIO_NET_HDR_GSO_UDP;
    CHECK_EQ(nb_vnet_to_rx(&h, F, n, &all, &m, &why), -1);
}

int main(void)
{
    test_from_tx();
    test_to_rx();
    return check_done("nb_vnet_test");
}
