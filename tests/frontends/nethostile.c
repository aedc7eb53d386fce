/* nethostile - a hostile netif backend for tests: it does the xenbus
 * handshake with whatever frontend the backend dir names, then, for a
 * bounded time, mixes well-formed traffic (rx packets of random bytes into
 * the posted buffers, tx requests answered) with every kind of nonsense a
 * broken or malicious backend could put in the shared rings: producer
 * indexes out of range, unknown and repeated ids, impossible statuses,
 * offsets and sizes past the page, endless more_data chains, extra-info
 * nobody asked for, state changes at random, and silence. Seeded, so a
 * failure can be replayed.
 *
 *   nethostile --backend DIR [--seconds N] [--seed S]
 *
 * Prints HOSTILE-CONNECT on every connection and HOSTILE-DONE <counts> at
 * the end. Every wait is bounded by the deadline.
 */
#define _GNU_SOURCE
#include "xen_barriers.h"
#include "pv-keys.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xen/io/netif.h>
#include <xen/io/xenbus.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>

#define PAGE 4096u

struct hb {
    struct xs_handle *xs;
    xengnttab_handle *gt;
    xenevtchn_handle *xce;
    char be[256], fe[256];
    unsigned fe_id;
    netif_tx_sring_t *ts;
    netif_rx_sring_t *rs;
    evtchn_port_t port;
    bool connected;
    RING_IDX tx_pvt, rx_pvt; /* our response producers */
    uint64_t rng;
    unsigned long acts[12];
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint32_t rnd(struct hb *h)
{
    /* xorshift64* */
    h->rng ^= h->rng >> 12;
    h->rng ^= h->rng << 25;
    h->rng ^= h->rng >> 27;
    return (uint32_t)((h->rng * 2685821657736338717ull) >> 32);
}

static char *rd(struct hb *h, const char *dir, const char *key)
{
    char p[320];
    snprintf(p, sizeof(p), "%s/%s", dir, key);
    unsigned len;
    char *v = xs_read(h->xs, XBT_NULL, p, &len);
    return v;
}

static int rd_uint(struct hb *h, const char *dir, const char *key, unsigned long max,
                   unsigned long *out)
{
    char *v = rd(h, dir, key), *end;
    if (!v)
        return -1;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    int bad = errno || end == v || *end || v[0] == '-' || x > max;
    free(v);
    if (bad)
        return -1;
    *out = x;
    return 0;
}

static void wr(struct hb *h, const char *key, const char *val)
{
    char p[320];
    snprintf(p, sizeof(p), "%s/%s", h->be, key);
    if (!xs_write(h->xs, XBT_NULL, p, val, strlen(val)))
        fprintf(stderr, "nethostile: write %s: %s\n", p, strerror(errno));
}

static void set_state(struct hb *h, int st)
{
    char v[8];
    snprintf(v, sizeof(v), "%d", st);
    wr(h, PVK_STATE, v);
}

static void disconnect(struct hb *h)
{
    if (!h->connected)
        return;
    xenevtchn_unbind(h->xce, h->port);
    xengnttab_unmap(h->gt, h->ts, 1);
    xengnttab_unmap(h->gt, h->rs, 1);
    h->ts = NULL;
    h->rs = NULL;
    h->connected = false;
}

static int do_connect(struct hb *h)
{
    unsigned long txr, rxr, ev;
    if (rd_uint(h, h->fe, PVK_NET_TX_RING_REF, UINT32_MAX, &txr) < 0 ||
        rd_uint(h, h->fe, PVK_NET_RX_RING_REF, UINT32_MAX, &rxr) < 0 ||
        rd_uint(h, h->fe, PVK_EVENT_CHANNEL, UINT32_MAX, &ev) < 0)
        return -1;
    h->ts = xengnttab_map_grant_ref(h->gt, h->fe_id, (uint32_t)txr, PROT_READ | PROT_WRITE);
    h->rs = xengnttab_map_grant_ref(h->gt, h->fe_id, (uint32_t)rxr, PROT_READ | PROT_WRITE);
    if (!h->ts || !h->rs) {
        if (h->ts)
            xengnttab_unmap(h->gt, h->ts, 1);
        if (h->rs)
            xengnttab_unmap(h->gt, h->rs, 1);
        h->ts = NULL;
        h->rs = NULL;
        return -1;
    }
    xenevtchn_port_or_error_t p = xenevtchn_bind_interdomain(h->xce, h->fe_id, (uint32_t)ev);
    if (p < 0) {
        xengnttab_unmap(h->gt, h->ts, 1);
        xengnttab_unmap(h->gt, h->rs, 1);
        h->ts = NULL;
        h->rs = NULL;
        return -1;
    }
    h->port = (evtchn_port_t)p;
    h->tx_pvt = __atomic_load_n(&h->ts->rsp_prod, __ATOMIC_ACQUIRE);
    h->rx_pvt = __atomic_load_n(&h->rs->rsp_prod, __ATOMIC_ACQUIRE);
    h->connected = true;
    printf("HOSTILE-CONNECT\n");
    fflush(stdout);
    return 0;
}

static void push(struct hb *h, bool tx, RING_IDX prod)
{
    /* responses /then/ producer index */
    __atomic_store_n(tx ? &h->ts->rsp_prod : &h->rs->rsp_prod, prod, __ATOMIC_RELEASE);
    xenevtchn_notify(h->xce, h->port);
}

/* A well-formed rx packet of random bytes in the next posted buffer. */
static void good_rx(struct hb *h)
{
    RING_IDX req = __atomic_load_n(&h->rs->req_prod, __ATOMIC_ACQUIRE);
    if (req - h->rx_pvt == 0 || req - h->rx_pvt > 256)
        return;
    netif_rx_request_t r;
    memcpy(&r, &h->rs->ring[h->rx_pvt % 256].req, sizeof(r));
    uint8_t *pg = xengnttab_map_grant_ref(h->gt, h->fe_id, r.gref, PROT_READ | PROT_WRITE);
    if (!pg)
        return;
    unsigned len = 14 + rnd(h) % (PAGE - 14);
    for (unsigned i = 0; i < len; i++)
        pg[i] = (uint8_t)rnd(h);
    if (rnd(h) % 2) /* sometimes to the guest's own address, so it is delivered */
        memcpy(pg, "\x00\x16\x3e\x4e\x46\x01", 6);
    xengnttab_unmap(h->gt, pg, 1);
    netif_rx_response_t rsp = {.id = r.id, .offset = 0, .flags = 0, .status = (int16_t)len};
    /* Sometimes offloads: a partial checksum, a GSO extra-info in the next slot
     * (well-formed on the ring; the bytes it describes are random). */
    bool gso = req - h->rx_pvt >= 2 && rnd(h) % 4 == 0;
    if (rnd(h) % 3 == 0 || gso)
        rsp.flags |= NETRXF_csum_blank | NETRXF_data_validated;
    if (gso)
        rsp.flags |= NETRXF_extra_info;
    memcpy(&h->rs->ring[h->rx_pvt % 256].rsp, &rsp, sizeof(rsp));
    h->rx_pvt++;
    if (gso) {
        netif_extra_info_t e = {.type = XEN_NETIF_EXTRA_TYPE_GSO};
        e.u.gso.type = rnd(h) % 2 ? XEN_NETIF_GSO_TYPE_TCPV4 : XEN_NETIF_GSO_TYPE_TCPV6;
        e.u.gso.size = (uint16_t)(rnd(h) % 9000);
        memcpy(&h->rs->ring[h->rx_pvt % 256].rsp, &e, sizeof(e));
        h->rx_pvt++;
        h->acts[2]++;
    }
    push(h, false, h->rx_pvt);
}

/* Answer the tx requests there are, correctly. */
static void good_tx(struct hb *h)
{
    RING_IDX req = __atomic_load_n(&h->ts->req_prod, __ATOMIC_ACQUIRE);
    unsigned n = 0;
    while (req - h->tx_pvt > 0 && req - h->tx_pvt <= 256 && n++ < 256) {
        netif_tx_request_t r;
        memcpy(&r, &h->ts->ring[h->tx_pvt % 256].req, sizeof(r));
        netif_tx_response_t rsp = {.id = r.id, .status = NETIF_RSP_OKAY};
        memcpy(&h->ts->ring[h->tx_pvt % 256].rsp, &rsp, sizeof(rsp));
        h->tx_pvt++;
    }
    if (n)
        push(h, true, h->tx_pvt);
}

static void bad(struct hb *h)
{
    unsigned kind = rnd(h) % 9;
    h->acts[3 + kind]++;
    switch (kind) {
    case 0: /* a producer index from nowhere */
        push(h, rnd(h) % 2, h->rx_pvt + 300 + rnd(h) % 100000);
        break;
    case 1: { /* an rx response with an id that is not the slot's */
        netif_rx_response_t rsp = {.id = (uint16_t)rnd(h), .status = 60};
        memcpy(&h->rs->ring[h->rx_pvt % 256].rsp, &rsp, sizeof(rsp));
        push(h, false, ++h->rx_pvt);
        break;
    }
    case 2: { /* offset + size past the page */
        RING_IDX req = __atomic_load_n(&h->rs->req_prod, __ATOMIC_ACQUIRE);
        netif_rx_request_t r;
        memcpy(&r, &h->rs->ring[h->rx_pvt % 256].req, sizeof(r));
        netif_rx_response_t rsp = {.id = req - h->rx_pvt ? r.id : 0,
                                   .offset = (uint16_t)(rnd(h) % 8192),
                                   .status = (int16_t)(rnd(h) % 32767)};
        memcpy(&h->rs->ring[h->rx_pvt % 256].rsp, &rsp, sizeof(rsp));
        push(h, false, ++h->rx_pvt);
        break;
    }
    case 3: { /* a more_data chain longer than any packet */
        for (unsigned i = 0; i < 40; i++) {
            netif_rx_request_t r;
            memcpy(&r, &h->rs->ring[h->rx_pvt % 256].req, sizeof(r));
            netif_rx_response_t rsp = {.id = r.id, .flags = NETRXF_more_data, .status = 100};
            memcpy(&h->rs->ring[h->rx_pvt % 256].rsp, &rsp, sizeof(rsp));
            h->rx_pvt++;
        }
        push(h, false, h->rx_pvt);
        break;
    }
    case 4: { /* extra-info nobody asked for */
        netif_rx_request_t r;
        memcpy(&r, &h->rs->ring[h->rx_pvt % 256].req, sizeof(r));
        netif_rx_response_t rsp = {.id = r.id, .flags = NETRXF_extra_info, .status = 60};
        memcpy(&h->rs->ring[h->rx_pvt % 256].rsp, &rsp, sizeof(rsp));
        push(h, false, ++h->rx_pvt);
        break;
    }
    case 5: { /* a tx response: unknown id, NULL, or an impossible status */
        netif_tx_response_t rsp = {.id = (uint16_t)rnd(h), .status = (int16_t)rnd(h)};
        if (rnd(h) % 3 == 0)
            rsp.status = NETIF_RSP_NULL;
        memcpy(&h->ts->ring[h->tx_pvt % 256].rsp, &rsp, sizeof(rsp));
        push(h, true, ++h->tx_pvt);
        break;
    }
    case 6: { /* random bytes in every response slot, then a plausible index */
        for (unsigned i = 0; i < 256; i++) {
            uint32_t w[3] = {rnd(h), rnd(h), rnd(h)};
            memcpy(&h->rs->ring[i].rsp, w, sizeof(h->rs->ring[i].rsp));
            memcpy(&h->ts->ring[i].rsp, w, sizeof(h->ts->ring[i].rsp));
        }
        push(h, false, h->rx_pvt + 1 + rnd(h) % 8);
        push(h, true, h->tx_pvt + 1 + rnd(h) % 8);
        break;
    }
    case 7: { /* the state, at random */
        static const int st[] = {XenbusStateInitWait, XenbusStateClosing, XenbusStateClosed,
                                 XenbusStateConnected, XenbusStateUnknown};
        set_state(h, st[rnd(h) % 5]);
        break;
    }
    case 8: /* silence: stop answering for a while (the frontend's deadline) */
        usleep(1000u * (rnd(h) % 1500));
        break;
    }
}

int main(int argc, char **argv)
{
    const char *be = NULL;
    unsigned long seconds = 10, seed = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--backend"))
            be = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds"))
            seconds = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoul(argv[i + 1], NULL, 10);
    }
    if (!be || strlen(be) >= 256 || seconds == 0 || seconds > 3600) {
        fprintf(stderr, "usage: nethostile --backend DIR [--seconds 1..3600] [--seed S]\n");
        return 2;
    }
    static struct hb h;
    snprintf(h.be, sizeof(h.be), "%s", be);
    h.rng = seed * 0x9e3779b97f4a7c15ull + 1;
    h.xs = xs_open(0);
    h.gt = xengnttab_open(NULL, 0);
    h.xce = xenevtchn_open(NULL, 0);
    if (!h.xs || !h.gt || !h.xce) {
        fprintf(stderr, "nethostile: open xenstore/gnttab/evtchn: %s\n", strerror(errno));
        return 1;
    }
    char *fe = rd(&h, h.be, PVK_FRONTEND);
    unsigned long fe_id;
    if (!fe || strlen(fe) >= sizeof(h.fe) ||
        rd_uint(&h, h.be, PVK_FRONTEND_ID, 32767, &fe_id) < 0) {
        fprintf(stderr, "nethostile: %s: no usable frontend, frontend-id\n", h.be);
        return 1;
    }
    snprintf(h.fe, sizeof(h.fe), "%s", fe);
    free(fe);
    h.fe_id = (unsigned)fe_id;
    wr(&h, PVK_NET_FEATURE_RX_COPY, "1");
    wr(&h, PVK_NET_FEATURE_SG, "1");
    wr(&h, PVK_NET_FEATURE_MCAST_CONTROL, seed % 2 ? "1" : "0");
    set_state(&h, XenbusStateInitWait);
    uint64_t end = now_ms() + seconds * 1000u;
    int ours = XenbusStateInitWait;
    while (now_ms() < end) {
        unsigned long fst = 0;
        if (rd_uint(&h, h.fe, PVK_STATE, 7, &fst) < 0)
            fst = XenbusStateUnknown;
        if (!h.connected && (fst == XenbusStateConnected || fst == XenbusStateInitialised) &&
            ours == XenbusStateInitWait) {
            if (do_connect(&h) == 0) {
                set_state(&h, XenbusStateConnected);
                ours = XenbusStateConnected;
            }
        } else if (fst == XenbusStateClosed || fst == XenbusStateClosing ||
                   fst == XenbusStateUnknown) {
            if (ours != XenbusStateClosed) {
                disconnect(&h);
                set_state(&h, XenbusStateClosed);
                ours = XenbusStateClosed;
            }
        } else if (fst == XenbusStateInitialising && ours != XenbusStateInitWait) {
            disconnect(&h);
            set_state(&h, XenbusStateInitWait);
            ours = XenbusStateInitWait;
        }
        if (h.connected) {
            unsigned r = rnd(&h) % 100;
            if (r < 45) {
                good_rx(&h);
                h.acts[0]++;
            } else if (r < 90) {
                good_tx(&h);
                h.acts[1]++;
            } else {
                bad(&h);
            }
        }
        usleep(2000);
    }
    disconnect(&h);
    printf("HOSTILE-DONE good-rx=%lu (gso %lu) good-tx=%lu", h.acts[0], h.acts[2], h.acts[1]);
    for (unsigned k = 0; k < 9; k++)
        printf(" bad%u=%lu", k, h.acts[3 + k]);
    printf("\n");
    xenevtchn_close(h.xce);
    xengnttab_close(h.gt);
    xs_close(h.xs);
    return 0;
}
