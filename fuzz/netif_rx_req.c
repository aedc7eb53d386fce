/* netif_rx_req - netback's receive side (backends/net/nb_rx.c): the
 * frontend's rx ring producer index as slots_posted checks it
 * (be_ring_prod_ok, backends/core/be.h; an rx request itself is an id and a
 * gref, echoed and used as the copy's destination, nothing to decode), and
 * each frame read from the TAP (the bridge's peers' bytes) as read_frame
 * takes it: nb_vnet_to_rx (nb_vnet.c: the virtio_net_hdr's checksum and GSO
 * offsets against the frame, the checksum completed in place) for the
 * frontend's capabilities, then the multicast filter (nb_mcast_allows).
 *
 * Input: capabilities byte, ring indexes (4 x u32), then frames: a length
 * (u16), a virtio_net_hdr, the frame. */
#define _GNU_SOURCE
#include "be.h"
#include "fuzz.h"
#include "nb_mcast.h"
#include "nb_vnet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz f = {data, size};
    uint8_t cb = fz_u8(&f);
    struct nb_rxcaps caps = {
        .sg = cb & 1, .csum4 = cb & 2, .csum6 = cb & 4, .gso4 = cb & 8, .gso6 = cb & 16};
    (void)nb_vnet_tun_offloads(&caps);
    struct nb_mcast mc = {0};
    static const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb};
    FZ_CHECK(nb_mcast_add(&mc, group) == 0);

    /* slots_posted: the frontend's req_prod (or its req_event) against ours. */
    RING_IDX prod = fz_u32(&f), cons = fz_u32(&f), rsp = fz_u32(&f);
    unsigned need = fz_u8(&f) % 19 + 1;
    if (be_ring_prod_ok(prod, cons, rsp, 256))
        FZ_CHECK(prod - cons <= 256 && prod - rsp <= 256);
    (void)need;

    static uint8_t frame[65536 + 256];
    while (fz_left(&f)) {
        unsigned len = fz_u16(&f);
        struct virtio_net_hdr h;
        fz_bytes(&f, &h, sizeof(h));
        if (len < 14)
            continue; /* read_frame: shorter than an Ethernet header is dropped */
        fz_bytes(&f, frame, len);
        struct nb_rxmeta m;
        const char *why = "";
        if (nb_vnet_to_rx(&h, frame, len, &caps, &m, &why) < 0) {
            FZ_CHECK(why && why[0]);
            continue;
        }
        if (m.gso_type != XEN_NETIF_GSO_TYPE_NONE)
            FZ_CHECK(m.gso_size > 0 &&
                     (m.gso_type == XEN_NETIF_GSO_TYPE_TCPV4 ? caps.gso4 : caps.gso6));
        (void)nb_mcast_allows(&mc, cb & 32, frame);
    }
    return 0;
}
