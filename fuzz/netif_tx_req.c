/* netif_tx_req - netback's decoding of guest-transmit requests, as tx_pass
 * (backends/net/nb_tx.c) runs it over the slots copied off the ring:
 * nb_tx_decode (backends/net/nb_txcheck.c: data slots, extra-info slots with
 * GSO and multicast, sizes and offsets against the page) packet by packet;
 * for a multicast operation nb_mcast_add/del (nb_mcast.c); for a packet that
 * may go, its frame (the granted data, from the input) through
 * nb_vnet_from_tx (nb_vnet.c: checksum and GSO offload placement by parsing
 * the frame) and nb_spoof_check (nb_spoof.c: source MAC, IPv4, ARP, VLAN).
 *
 * Input: a spoof-rules byte, the number of slots, the slots (12 bytes each,
 * extra-info slots overlaid as on the ring), then the frames' bytes. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "nb_mcast.h"
#include "nb_spoof.h"
#include "nb_txcheck.h"
#include "nb_vnet.h"

#define MAX_SLOTS 256 /* NET_TX_RING_SIZE */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz f = {data, size};
    uint8_t rules = fz_u8(&f);
    struct nb_spoof sp = {.mac = {0x00, 0x16, 0x3e, 0x12, 0x34, 0x56}};
    const char *why = "";
    if (rules & 1)
        FZ_CHECK(nb_spoof_parse_ips("10.0.0.2 192.168.1.7", &sp, &why) == 0);
    static struct nb_mcast mc;
    if (rules & 2)
        nb_mcast_clear(&mc);

    netif_tx_request_t slots[MAX_SLOTS];
    unsigned n = fz_u8(&f) % MAX_SLOTS + 1;
    fz_bytes(&f, slots, n * sizeof(slots[0]));

    static uint8_t frame[65536];
    unsigned pos = 0;
    while (pos < n) {
        struct nb_txpkt p;
        unsigned used = nb_tx_decode(&slots[pos], n - pos, &p);
        if (used == 0)
            break; /* its slots are not all posted: tx_pass waits */
        FZ_CHECK(used <= n - pos && used == p.nslots);
        FZ_CHECK(p.data_off >= 1 && p.ndata >= 1 && p.data_off + p.ndata - 1 == used);
        pos += used;
        if (p.status != NETIF_RSP_OKAY) {
            FZ_CHECK(p.why && p.why[0]);
            continue;
        }
        if (nb_txpkt_is_mcast(&p)) {
            if (p.extras & (1u << XEN_NETIF_EXTRA_TYPE_MCAST_DEL))
                nb_mcast_del(&mc, p.extra[XEN_NETIF_EXTRA_TYPE_MCAST_DEL].u.mcast.addr);
            if (p.extras & (1u << XEN_NETIF_EXTRA_TYPE_MCAST_ADD))
                (void)nb_mcast_add(&mc, p.extra[XEN_NETIF_EXTRA_TYPE_MCAST_ADD].u.mcast.addr);
            FZ_CHECK(mc.n <= NB_MCAST_MAX);
            continue;
        }
        /* What add_segs copies: every slot inside its page, the total the packet's size. */
        FZ_CHECK(p.total >= NB_MIN_PKT && p.ndata <= NB_MAX_SLOTS);
        uint32_t sum = 0;
        for (unsigned k = 0; k < p.ndata; k++) {
            const netif_tx_request_t *s = nb_txpkt_slot(&slots[pos - used], &p, k);
            uint32_t len = k == 0 ? p.first_len : s->size;
            FZ_CHECK(s->offset + len <= NB_PAGE_SIZE);
            sum += len;
        }
        FZ_CHECK(sum == p.total);
        fz_bytes(&f, frame, p.total);
        struct virtio_net_hdr h;
        if (nb_vnet_from_tx(&p, frame, p.total, &h, &why) < 0) {
            FZ_CHECK(why && why[0]);
            continue;
        }
        if (h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
            FZ_CHECK((uint32_t)h.csum_start + h.csum_offset + 2 <= p.total);
        (void)nb_spoof_check(&sp, frame, p.total);
    }
    return 0;
}
