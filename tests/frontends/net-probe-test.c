/* net-probe-test - unit tests of the netfront's liveness probe: its schedule
 * and address (nf_probe.c), and the request on the tx ring (nf_conn.c:
 * nf_conn_tx_probe) with the backend played here on a ring in plain memory
 * (no grants, no event channel: nothing here calls nf_conn_setup). Exit 0 if
 * every check holds. */
#define _GNU_SOURCE
#include "nf_conn.h"
#include "nf_probe.h"

#include "net_l4.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---- the schedule ---- */

static void test_schedule(void)
{
    struct nf_probe p = {.idle_ms = 500};
    nf_probe_start(&p, 1000);
    CHECK(nf_probe_wait(&p, 1100) == 400);
    CHECK(!nf_probe_due(&p, false, 1499));
    CHECK(nf_probe_due(&p, false, 1500));
    CHECK(nf_probe_wait(&p, 1600) == 0);
    nf_probe_sent(&p, 1500);
    CHECK(p.sent == 1);
    /* Outstanding (busy) until answered at 1510: the next is due 500 ms after. */
    CHECK(!nf_probe_due(&p, true, 1510));
    CHECK(!nf_probe_due(&p, false, 2009));
    CHECK(nf_probe_due(&p, false, 2010));
    /* Busy (tx traffic) pushes it back whatever the time. */
    CHECK(!nf_probe_due(&p, true, 5000));
    CHECK(!nf_probe_due(&p, false, 5499));
    CHECK(nf_probe_due(&p, false, 5500));
    /* Off: never due, no wake-up. */
    struct nf_probe off = {.idle_ms = 0};
    nf_probe_start(&off, 0);
    CHECK(!nf_probe_due(&off, false, 1000000));
    CHECK(nf_probe_wait(&off, 0) == UINT64_MAX);
}

/* A minute in 1 ms turns with traffic coming and going (a fixed LCG): probes
 * only on turns with nothing outstanding, never two at once, at least
 * idle_ms apart, at most one per idle_ms. */
static void test_rate(void)
{
    struct nf_probe p = {.idle_ms = 500};
    nf_probe_start(&p, 0);
    uint32_t rng = 12345;
    uint64_t last = 0, probe_due_at = 0, traffic_until = 0;
    bool outstanding = false;
    unsigned n = 0;
    for (uint64_t t = 1; t <= 60000; t++) {
        rng = rng * 1103515245u + 12345u;
        if ((rng >> 16) % 4000 == 0) /* a burst of traffic now and then */
            traffic_until = t + (rng >> 8) % 700;
        if (outstanding && t >= probe_due_at)
            outstanding = false; /* answered after 3 ms */
        bool busy = outstanding || t < traffic_until;
        if (nf_probe_due(&p, busy, t)) {
            CHECK(!busy && !outstanding);
            CHECK(n == 0 || t - last >= 500);
            nf_probe_sent(&p, t);
            outstanding = true;
            probe_due_at = t + 3;
            last = t;
            n++;
        }
    }
    CHECK(n >= 1 && n <= 60000 / 500);
    CHECK(p.sent == n);
    /* Never while traffic is always outstanding. */
    struct nf_probe q = {.idle_ms = 500};
    nf_probe_start(&q, 0);
    for (uint64_t t = 1; t <= 10000; t++)
        CHECK(!nf_probe_due(&q, true, t));
}

/* ---- the address ---- */

static void candidate(unsigned k, uint8_t out[6])
{
    const uint8_t base[6] = {0x03, 0x75, 0x6e, 0x64, 0x00, 0x00};
    memcpy(out, base, 6);
    out[4] = (uint8_t)(k >> 8);
    out[5] = (uint8_t)k;
}

static void test_addr(void)
{
    struct nf_shadow a = {0}, b = {0};
    uint8_t x[6], c0[6];
    nf_probe_addr(&a, &b, x);
    candidate(0, c0);
    CHECK(!memcmp(x, c0, 6));
    CHECK(x[0] & 1); /* a group address: a multicast list operation names one */
    CHECK(x[0] & 2); /* locally administered: no protocol's group */
    /* The guest joined it: the next one. */
    memcpy(a.mc[a.nmc++], c0, 6);
    nf_probe_addr(&a, &b, x);
    CHECK(!nf_shadow_has(&a, x) && !nf_shadow_has(&b, x));
    /* Both lists full of candidates (the guest's 0..63, the backend's
     * 64..127): still one outside both. */
    a.nmc = b.nmc = 0;
    for (unsigned k = 0; k < NF_MCAST_MAX; k++) {
        candidate(k, a.mc[a.nmc++]);
        candidate(NF_MCAST_MAX + k, b.mc[b.nmc++]);
    }
    nf_probe_addr(&a, &b, x);
    CHECK(!nf_shadow_has(&a, x) && !nf_shadow_has(&b, x));
    uint8_t last[6];
    candidate(2 * NF_MCAST_MAX, last);
    CHECK(!memcmp(x, last, 6));
}

/* ---- the request on the ring ---- */

struct ring {
    struct nf_conn *c;
    RING_IDX bprod; /* responses the backend has produced */
};

static void ring_init(struct ring *r)
{
    struct nf_conn *c = calloc(1, sizeof(*c));
    void *txs = aligned_alloc(NF_PAGE, NF_PAGE), *rxs = aligned_alloc(NF_PAGE, NF_PAGE);
    c->txpg = calloc(NF_TX_PAGES, NF_PAGE);
    if (!c || !txs || !rxs || !c->txpg) {
        perror("net-probe-test");
        exit(1);
    }
    memset(txs, 0, NF_PAGE);
    memset(rxs, 0, NF_PAGE);
    c->txs = txs;
    c->rxs = rxs;
    SHARED_RING_INIT((netif_tx_sring_t *)txs);
    SHARED_RING_INIT((netif_rx_sring_t *)rxs);
    FRONT_RING_INIT(&c->tx, (netif_tx_sring_t *)txs, NF_PAGE);
    FRONT_RING_INIT(&c->rx, (netif_rx_sring_t *)rxs, NF_PAGE);
    for (unsigned i = NF_TX_PAGES; i-- > 0;) {
        c->txfree[c->ntxfree++] = (uint16_t)i;
        c->txref[i] = 1000 + i;
    }
    r->c = c;
    r->bprod = 0;
}

static void ring_free(struct ring *r)
{
    free(r->c->txs);
    free(r->c->rxs);
    free(r->c->txpg);
    free(r->c);
}

/* The backend answers one slot (status NETIF_RSP_NULL for an extra-info). */
static void answer(struct ring *r, uint16_t id, int16_t status)
{
    netif_tx_response_t *rsp = RING_GET_RESPONSE(&r->c->tx, r->bprod);
    rsp->id = id;
    rsp->status = status;
    r->bprod++;
    r->c->tx.sring->rsp_prod = r->bprod;
}

static char why[160];

static int harvest(struct ring *r)
{
    why[0] = 0;
    return nf_conn_harvest(r->c, NULL, NULL, why, sizeof(why));
}

static void test_ring(void)
{
    const uint8_t addr[6] = {0x03, 0x75, 0x6e, 0x64, 0x00, 0x07};
    struct ring r;
    ring_init(&r);
    struct nf_conn *c = r.c;
    CHECK(nf_conn_tx_idle(c));

    /* Formed as netif.h forms a multicast list operation: a dummy request
     * flagged extra_info, then one MCAST_DEL extra-info slot. */
    CHECK(nf_conn_tx_probe(c, addr, 100));
    CHECK(c->tx.req_prod_pvt == 2);
    const netif_tx_request_t *req = RING_GET_REQUEST(&c->tx, 0);
    CHECK(req->flags == NETTXF_extra_info);
    CHECK(req->size == NET_ETH_HLEN && req->offset == 0);
    CHECK(req->id < NF_TX_PAGES && req->id == c->probe_id);
    CHECK(req->gref == c->txref[req->id]);
    const netif_extra_info_t *e = (const netif_extra_info_t *)RING_GET_REQUEST(&c->tx, 1);
    CHECK(e->type == XEN_NETIF_EXTRA_TYPE_MCAST_DEL);
    CHECK(e->flags == 0); /* no further extra-info */
    CHECK(!memcmp(e->u.mcast.addr, addr, 6));
    CHECK(c->probe_out && c->probes == 1);
    CHECK(c->tx_mcast_pending == 0); /* not a list operation of the guest's */
    uint64_t since = 0;
    CHECK(nf_conn_oldest(c, &since) && since == 100); /* under the deadline */
    uint16_t pid = req->id;

    /* Never two at once. */
    CHECK(!nf_conn_tx_probe(c, addr, 150));
    CHECK(c->tx.req_prod_pvt == 2 && c->probes == 1);

    /* Real traffic is not held back by it. */
    uint8_t frame[60] = {0};
    struct virtio_net_hdr vh = {0};
    CHECK(nf_conn_tx_room(c, 1, 1));
    nf_conn_tx_frame(c, frame, sizeof(frame), 0, NULL, &vh, 200);
    CHECK(c->tx.req_prod_pvt == 3);
    uint16_t fid = RING_GET_REQUEST(&c->tx, 2)->id;
    CHECK(nf_conn_oldest(c, &since) && since == 100); /* the probe is the oldest */

    /* Answered: the probe's slot OKAY, its extra-info NULL; not a packet. */
    answer(&r, pid, NETIF_RSP_OKAY);
    answer(&r, 0, NETIF_RSP_NULL);
    CHECK(harvest(&r) == 0 && !why[0]);
    CHECK(!c->probe_out && c->probes_answered == 1);
    CHECK(c->tx_pkts == 0 && c->tx_err == 0 && c->mcast_err == 0);
    /* ... but not while the frame is outstanding. */
    CHECK(!nf_conn_tx_idle(c));
    CHECK(!nf_conn_tx_probe(c, addr, 300));
    answer(&r, fid, NETIF_RSP_OKAY);
    CHECK(harvest(&r) == 0 && !why[0]);
    CHECK(c->tx_pkts == 1);
    CHECK(nf_conn_tx_idle(c) && !nf_conn_oldest(c, &since));

    /* Nor while a multicast list operation of the guest's is outstanding. */
    const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x01, 0x02, 0x03};
    nf_conn_tx_mcast(c, XEN_NETIF_EXTRA_TYPE_MCAST_ADD, group, 400);
    uint16_t mid = RING_GET_REQUEST(&c->tx, c->tx.req_prod_pvt - 2)->id;
    CHECK(!nf_conn_tx_probe(c, addr, 400));
    answer(&r, mid, NETIF_RSP_OKAY);
    /* Its extra-info's NULL not yet seen: still not idle. */
    CHECK(harvest(&r) == 0 && !why[0]);
    CHECK(!nf_conn_tx_idle(c) && !nf_conn_tx_probe(c, addr, 410));
    answer(&r, 0, NETIF_RSP_NULL);
    CHECK(harvest(&r) == 0 && !why[0]);
    CHECK(nf_conn_tx_idle(c) && c->tx_mcast_pending == 0);

    /* An error answer is still a sign of life, not a fault and not a packet. */
    CHECK(nf_conn_tx_probe(c, addr, 500));
    pid = c->probe_id;
    answer(&r, pid, NETIF_RSP_ERROR);
    answer(&r, 0, NETIF_RSP_NULL);
    CHECK(harvest(&r) == 0 && !why[0]);
    CHECK(!c->probe_out && c->probes == 2 && c->probes_answered == 2);
    CHECK(c->tx_err == 0 && c->mcast_err == 0);

    /* Answered twice (instead of the frame after it): the second is an
     * unknown id, a protocol violation. */
    CHECK(nf_conn_tx_probe(c, addr, 600));
    pid = c->probe_id;
    nf_conn_tx_frame(c, frame, sizeof(frame), 0, NULL, &vh, 610);
    answer(&r, pid, NETIF_RSP_OKAY);
    answer(&r, 0, NETIF_RSP_NULL);
    answer(&r, pid, NETIF_RSP_OKAY);
    CHECK(harvest(&r) < 0 && strstr(why, "unknown-id"));
    ring_free(&r);

    /* A full ring of the guest's frames: no probe, no room taken. */
    ring_init(&r);
    c = r.c;
    unsigned sent = 0;
    for (unsigned i = 0; i < NF_TX_PAGES && nf_conn_tx_room(c, 1, 1); i++, sent++)
        nf_conn_tx_frame(c, frame, sizeof(frame), 0, NULL, &vh, 700);
    CHECK(sent == NF_TX_PAGES);
    RING_IDX before = c->tx.req_prod_pvt;
    CHECK(!nf_conn_tx_probe(c, addr, 800));
    CHECK(c->tx.req_prod_pvt == before && c->probes == 0);
    ring_free(&r);
}

int main(void)
{
    test_schedule();
    test_rate();
    test_addr();
    test_ring();
    return check_done("net-probe-test");
}
