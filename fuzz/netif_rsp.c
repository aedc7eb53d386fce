/* netif_rsp - the shadow netfront's harvest of netif responses
 * (shadow-frontends/net/nf_conn.c): its rings set up by nf_conn_setup over
 * fuzz/xenstub.c, tx frames and multicast operations queued by
 * nf_conn_tx_frame/nf_conn_tx_mcast, then tx and rx responses the input
 * writes into the shared rings as a backend would (ids, statuses, offsets,
 * flags, GSO and other extra-info slots, the producer indexes, the bytes of
 * the rx buffers), consumed by nf_conn_harvest; each packet it delivers goes
 * through the receive filter (nf_shadow_accepts) and nf_off_rx
 * (nf_offload.c: the GSO extra-info and checksum flags into a
 * virtio_net_hdr, checked against the frame), as nf_dev.c's deliver does.
 *
 * Input: rounds of: tx requests to queue, tx responses, rx responses. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "nf_conn.h"
#include "nf_offload.h"
#include "nf_shadow.h"
#include "xenstub.h"

static void deliver(void *arg, const uint8_t *frame, unsigned len, uint16_t flags,
                    const netif_extra_info_t *gso)
{
    const struct nf_shadow *sh = arg;
    static const uint8_t mac[6] = {0x00, 0x16, 0x3e, 0x12, 0x34, 0x56};
    FZ_CHECK(len >= 14 && len <= NF_RX_MAX);
    (void)nf_shadow_accepts(sh, mac, frame);
    struct virtio_net_hdr h;
    const char *why;
    if (nf_off_rx(flags, gso, frame, len, &h, &why) < 0)
        return;
    if (h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
        FZ_CHECK((uint32_t)h.csum_start + h.csum_offset + 2 <= len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz f = {data, size};
    static struct nf_conn c;
    xengntshr_handle *gs = xengntshr_open(NULL, 0);
    xenevtchn_handle *xce = xenevtchn_open(NULL, 0);
    FZ_CHECK(nf_conn_setup(&c, gs, xce, 1) == 0);
    c.track = true;
    struct nf_shadow sh;
    memset(&sh, 0, sizeof(sh));
    const char *mc = "2    eth0            1     0     01005e0000fb\n";
    (void)nf_shadow_parse_mcast(mc, "eth0", &sh);

    static uint8_t frame[NF_MAX_FRAME];
    memset(frame, 0xab, 64);
    while (fz_left(&f)) {
        /* The guest sends: frames and multicast operations. */
        uint8_t nt = fz_u8(&f) % 4;
        for (uint8_t i = 0; i < nt; i++) {
            uint8_t kind = fz_u8(&f);
            unsigned len = 14 + fz_u16(&f) % (3 * NF_PAGE);
            unsigned ns = (len + NF_PAGE - 1) / NF_PAGE;
            if (!nf_conn_tx_room(&c, ns, 1))
                break;
            if (kind & 1) {
                uint8_t a[6] = {0x01, 0x00, 0x5e, 0, 0, kind};
                nf_conn_tx_mcast(
                    &c, kind & 2 ? XEN_NETIF_EXTRA_TYPE_MCAST_ADD : XEN_NETIF_EXTRA_TYPE_MCAST_DEL,
                    a, 0);
                continue;
            }
            netif_extra_info_t gso = {.type = XEN_NETIF_EXTRA_TYPE_GSO};
            gso.u.gso.type = XEN_NETIF_GSO_TYPE_TCPV4;
            gso.u.gso.size = 1448;
            struct virtio_net_hdr vh = {0};
            nf_conn_tx_frame(&c, frame, len, 0, kind & 2 ? &gso : NULL, &vh, 0);
        }
        nf_conn_push(&c);

        /* The backend answers tx: ids of pages in flight (or any), statuses. */
        uint8_t ntx = fz_u8(&f) % 8;
        for (uint8_t i = 0; i < ntx; i++) {
            netif_tx_response_t r;
            uint8_t sel = fz_u8(&f);
            r.id = sel & 0x80 ? fz_u16(&f) : (uint16_t)(sel % NF_TX_PAGES);
            static const int16_t st[] = {NETIF_RSP_OKAY, NETIF_RSP_ERROR, NETIF_RSP_DROPPED,
                                         NETIF_RSP_NULL};
            uint8_t ss = fz_u8(&f);
            r.status = ss < 0xf0 ? st[ss % 4] : (int16_t)fz_u16(&f);
            *RING_GET_RESPONSE(&c.tx, c.tx.rsp_cons + i) = r;
        }
        uint8_t how = fz_u8(&f);
        c.tx.sring->rsp_prod = how < 0xf8 ? c.tx.rsp_cons + ntx : fz_u32(&f);

        /* ... and rx: data slots (or extra-info overlays), their buffers' bytes. */
        uint8_t nrx = fz_u8(&f) % 8;
        for (uint8_t i = 0; i < nrx; i++) {
            RING_IDX idx = c.rx.rsp_cons + i;
            uint8_t kind = fz_u8(&f);
            if (kind & 0x80) {
                netif_extra_info_t e;
                fz_bytes(&f, &e, sizeof(e));
                if (kind & 0x40)
                    e.type = XEN_NETIF_EXTRA_TYPE_GSO;
                memcpy(RING_GET_RESPONSE(&c.rx, idx), &e, sizeof(e));
                continue;
            }
            netif_rx_response_t r;
            r.id = kind & 0x40 ? fz_u16(&f) : (uint16_t)(idx % NF_RX_BUFS);
            r.offset = fz_u8(&f) % 2 ? fz_u16(&f) : 0;
            r.flags = fz_u16(&f);
            r.status = (int16_t)fz_u16(&f);
            *RING_GET_RESPONSE(&c.rx, idx) = r;
            if (r.status > 0 && r.offset < NF_PAGE) {
                unsigned n = (unsigned)r.status < NF_PAGE - r.offset ? (unsigned)r.status
                                                                     : NF_PAGE - r.offset;
                n = n < 128 ? n : 128; /* the headers; the rest stays as it was */
                fz_bytes(&f, c.rxpg + (size_t)(idx % NF_RX_BUFS) * NF_PAGE + r.offset, n);
            }
        }
        how = fz_u8(&f);
        c.rx.sring->rsp_prod = how < 0xf8 ? c.rx.rsp_cons + nrx : fz_u32(&f);

        char why[160];
        if (nf_conn_harvest(&c, deliver, &sh, why, sizeof(why)) < 0) {
            FZ_CHECK(why[0]);
            break; /* the connection is torn down */
        }
        FZ_CHECK(c.ntxfree <= NF_TX_PAGES);
    }
    nf_conn_teardown(&c);
    return 0;
}
