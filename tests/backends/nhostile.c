/* nhostile - a hostile netif frontend: for a bounded time, random (seeded)
 * tx requests (random grant refs, offsets, sizes, flags, ids, extra-info
 * slots, packets that never end), the malformed kinds of nbad.c, random rx
 * buffers (bad grant refs), slots rewritten after they were pushed, garbage
 * ring indexes, multicast floods, junk in its own xenstore keys, odd
 * connection options and reconnections. Whatever it does, netback must:
 * answer with statuses netif.h defines, never produce more responses than
 * requests, keep rx responses inside the page they name and in the slot of
 * their request, and answer a valid frame on every fresh connection in time.
 *
 *   nhostile FE-DIR SEED SECONDS
 * Prints "seed=<S>" first and "HOSTILE-OK ..." on success, "HOSTILE-FAIL:"
 * on a violation (exit 1).
 */
#define _GNU_SOURCE
#include "nbad.h"
#include "pv-keys.h"
#include "nframe.h"
#include "nfront.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xen/io/xenbus.h>

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static unsigned below(unsigned n)
{
    return n ? (unsigned)(rnd() % n) : 0;
}

static struct nf *T;
static struct nfr_end me = {.ip = {10, 99, 0, 2}, .port = 4000};
static struct nfr_end peer = {
    .mac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, .ip = {10, 99, 0, 1}, .port = 9};
static struct {
    uint64_t conns, badconns, valid, raw, bad, rxgarbage, rewrites, garbage, mcast, keys;
} st;
/* The current connection's tx ring holds requests we wrote at random: ids and
 * slot structure are no longer ours to check, only statuses and indexes. */
static bool raw_mode;
/* We wrote a random state: the next connection starts with a clean close. */
static bool dirty_state;
static const char *last_op = "none";

#define DIE(...)                                                                                   \
    do {                                                                                           \
        printf("HOSTILE-FAIL: " __VA_ARGS__);                                                      \
        printf(" (%s)\n", T->err);                                                                 \
        fflush(stdout);                                                                            \
        exit(1);                                                                                   \
    } while (0)

static bool valid_tx_status(int16_t s)
{
    return s == NETIF_RSP_OKAY || s == NETIF_RSP_ERROR || s == NETIF_RSP_DROPPED ||
           s == NETIF_RSP_NULL;
}

/* Consume tx responses on every queue, checking what can be checked. */
static void reap_tx(void)
{
    for (unsigned qi = 0; qi < T->nq; qi++) {
        struct nf_queue *q = &T->q[qi];
        RING_IDX rp = __atomic_load_n(&q->tx.sring->rsp_prod, __ATOMIC_ACQUIRE);
        if (rp - q->tx.rsp_cons > q->tx.req_prod_pvt - q->tx.rsp_cons)
            DIE("queue %u: tx rsp_prod %u past our requests (req_prod %u, rsp_cons %u)", qi, rp,
                q->tx.req_prod_pvt, q->tx.rsp_cons);
        while (q->tx.rsp_cons != rp) {
            netif_tx_response_t r;
            RING_COPY_RESPONSE(&q->tx, q->tx.rsp_cons, &r);
            q->tx.rsp_cons++;
            if (!valid_tx_status(r.status))
                DIE("queue %u: tx response status %d (id %u) in slot %u (rsp_prod %u, req_prod "
                    "%u, raw %d, last op %s)",
                    qi, r.status, r.id, q->tx.rsp_cons - 1, rp, q->tx.req_prod_pvt, raw_mode,
                    last_op);
            if (r.status != NETIF_RSP_NULL && r.id < NF_TX_PAGES)
                q->txbusy[r.id] = false;
        }
        q->tx.sring->rsp_event = q->tx.rsp_cons + 1;
    }
}

static void poll_all(unsigned ms)
{
    nf_wait_event(T, ms);
    reap_tx();
    /* rx: nfront checks slot, id, offset + size; our rx ids are always ours. */
    if (nf_poll_rx(T) < 0)
        DIE("rx: %s", T->err);
    struct nf_pkt p;
    while (nf_take(T, &p))
        free(p.data);
}

static uint32_t some_gref(struct nf_queue *q)
{
    switch (below(6)) {
    case 0:
        return (uint32_t)rnd();
    case 1:
        return below(16);
    case 2:
        return q->rx_ref; /* granted to the backend, but a ring */
    default:
        return q->txrefs[below(NF_TX_PAGES)];
    }
}

static uint16_t some_size(void)
{
    switch (below(5)) {
    case 0:
        return (uint16_t)rnd();
    case 1:
        return (uint16_t)below(20);
    default:
        return (uint16_t)(14 + below(4096));
    }
}

/* Random raw tx slots: anything a buggy or malicious frontend could write. */
static void raw_tx(unsigned qi)
{
    struct nf_queue *q = &T->q[qi];
    unsigned n = 1 + below(24);
    if (RING_FREE_REQUESTS(&q->tx) < n)
        return;
    netif_tx_request_t r[24];
    for (unsigned i = 0; i < n; i++) {
        if (below(6) == 0) { /* an extra-info slot */
            netif_extra_info_t x;
            memset(&x, 0, sizeof(x));
            x.type = (uint8_t)below(7);
            x.flags = (uint8_t)(below(3) == 0 ? XEN_NETIF_EXTRA_FLAG_MORE : 0);
            x.u.gso.size = (uint16_t)below(3000);
            x.u.gso.type = (uint8_t)below(4);
            for (unsigned k = 0; x.type >= 2 && x.type <= 3 && k < 6; k++)
                x.u.mcast.addr[k] = (uint8_t)rnd();
            memset(&r[i], 0, sizeof(r[i]));
            memcpy(&r[i], &x, sizeof(x));
            continue;
        }
        r[i].gref = some_gref(q);
        r[i].offset = (uint16_t)(below(4) == 0 ? rnd() : below(4096));
        r[i].size = some_size();
        r[i].id = (uint16_t)(below(4) == 0 ? rnd() : below(NF_TX_PAGES));
        r[i].flags = (uint16_t)(rnd() & 0xf);
        if (below(3) == 0)
            r[i].flags &= (uint16_t)~NETTXF_more_data;
    }
    /* Some real frame bytes in the pages, so that some packets pass. */
    uint8_t f[4096];
    size_t len = nfr_udp(f, sizeof(f), &me, &peer, 1, 8 + below(1000), below(2));
    memcpy(nf_txpage(T, qi, below(NF_TX_PAGES)), f, len);
    nf_push_raw(T, qi, r, n);
    raw_mode = true;
    st.raw++;
    last_op = "raw";
}

/* Rewrite slots after pushing them: the backend must decode only its own
 * copy. Every slot keeps NETTXF_more_data until the final one is pushed, so
 * the backend cannot answer (write into) a slot while we rewrite it. */
static void rewrite_tx(unsigned qi)
{
    struct nf_queue *q = &T->q[qi];
    unsigned n = 2 + below(7);
    /* Only on an idle ring: a packet left incomplete before could end inside
     * our slots (as its extra-info slots) and get them answered. */
    reap_tx();
    if (RING_FREE_REQUESTS(&q->tx) < n + 1 || q->tx.rsp_cons != q->tx.req_prod_pvt)
        return;
    netif_tx_request_t r[9];
    memset(r, 0, sizeof(r));
    for (unsigned i = 0; i < n; i++) {
        r[i].gref = q->txrefs[i];
        r[i].size = (uint16_t)(i == 0 ? 1400 : 100);
        r[i].id = (uint16_t)i;
        r[i].flags = NETTXF_more_data;
    }
    RING_IDX first = q->tx.req_prod_pvt;
    nf_push_raw(T, qi, r, n);
    nf_wait_event(T, below(3));
    for (unsigned i = 0; i < n; i++) {
        netif_tx_request_t *w = RING_GET_REQUEST(&q->tx, first + i);
        w->size = some_size();
        w->offset = (uint16_t)rnd();
        w->flags = (uint16_t)((rnd() & 0xf) | NETTXF_more_data);
        w->gref = some_gref(q);
        w->id = (uint16_t)below(NF_TX_PAGES);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    netif_tx_request_t last = {.gref = some_gref(q), .size = some_size(), .id = 63};
    nf_push_raw(T, qi, &last, 1);
    raw_mode = true;
    st.rewrites++;
    last_op = "rewrites";
}

/* Rx buffers with random grant refs (ids stay ours, so nfront can check). */
static void rx_garbage(unsigned qi)
{
    struct nf_queue *q = &T->q[qi];
    RING_IDX i = q->rx.req_prod_pvt;
    /* Only re-post slots whose answer we consumed. */
    if (i - q->rx.rsp_cons >= RING_SIZE(&q->rx))
        return;
    netif_rx_request_t *r = RING_GET_REQUEST(&q->rx, i);
    uint16_t id = (uint16_t)below(T->o.rx_bufs);
    r->id = id;
    /* Junk, or one of our tx pages (not a ring page: that would break our own ring). */
    r->gref = below(2) ? (uint32_t)rnd() : q->txrefs[below(NF_TX_PAGES)];
    q->posted[i % 256] = id;
    q->rx.req_prod_pvt++;
    RING_PUSH_REQUESTS(&q->rx);
    xenevtchn_notify(T->xce, q->bound_rx ? q->port_rx : q->port_tx);
    st.rxgarbage++;
    last_op = "rxgarbage";
}

static void garbage_index(unsigned qi)
{
    struct nf_queue *q = &T->q[qi];
    if (below(2))
        q->tx.sring->req_prod = (RING_IDX)rnd();
    else
        q->rx.sring->req_prod = q->rx.req_prod_pvt + 257 + below(100000);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    xenevtchn_notify(T->xce, q->port_tx);
    if (q->bound_rx)
        xenevtchn_notify(T->xce, q->port_rx);
    raw_mode = true;
    st.garbage++;
    last_op = "garbage";
}

static void junk_keys(void)
{
    static const char *const keys[] = {PVK_NET_REQUEST_MCAST_CONTROL,
                                       PVK_NET_FEATURE_SG,
                                       PVK_MQ_NUM_QUEUES,
                                       PVK_EVENT_CHANNEL,
                                       PVK_NET_TX_RING_REF,
                                       PVK_NET_FEATURE_GSO_TCPV4};
    static const char *const vals[] = {"1", "0", "2", "-1", "99999999999999999999", "", "x", "1 "};
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", T->fe, keys[below(sizeof(keys) / sizeof(keys[0]))]);
    const char *v = vals[below(sizeof(vals) / sizeof(vals[0]))];
    xs_write(T->xs, XBT_NULL, p, v, (unsigned)strlen(v));
    T->keys_tampered = true;
    st.keys++;
    last_op = "keys";
}

static void mcast_flood(void)
{
    for (unsigned k = 0, n = below(80); k < n; k++) {
        uint8_t m[6];
        for (unsigned b = 0; b < 6; b++)
            m[b] = (uint8_t)rnd();
        if (below(4))
            m[0] |= 1;
        int s = nf_mcast(T, below(3) != 0, m);
        if (s == -100)
            DIE("multicast operation unanswered");
        if (s != NETIF_RSP_OKAY && s != NETIF_RSP_ERROR)
            DIE("multicast operation status %d", s);
        st.mcast++;
        last_op = "mcast";
    }
}

static void valid_frame(unsigned qi)
{
    uint8_t f[NF_MAX_PKT];
    unsigned pay = 8 + below(3000);
    size_t len = nfr_udp(f, sizeof(f), &me, &peer, (uint32_t)st.valid, pay, below(2));
    struct nf_slot sl[4];
    unsigned n = 1 + below(3), pos = 0;
    for (unsigned k = 0; k < n; k++) {
        unsigned want = k + 1 == n ? (unsigned)len - pos : (unsigned)len / n;
        sl[k].off = (uint16_t)(want <= 2048 ? below(2048) : 0);
        sl[k].len = (uint16_t)want;
        pos += want;
    }
    if (nf_send(T, qi, f, (unsigned)len, sl, n, 0, NULL, 0) < 0)
        DIE("sending a valid frame: %s", T->err);
    st.valid++;
    last_op = "valid";
}

static struct nf_opts random_opts(void)
{
    struct nf_opts o;
    nf_default_opts(&o);
    o.timeout_ms = 5000;
    o.queues = 1 + below(4);
    if (below(12) == 0)
        o.queues = 5; /* over the limit: refused */
    o.split = below(2);
    o.sg = below(4) != 0;
    o.gso4 = below(2);
    o.gso6 = below(2);
    o.no_csum = below(4) == 0;
    o.mcast_ctrl = below(2);
    o.rx_bufs = 1 + below(NF_RX_BUFS);
    o.no_rx_copy = below(15) == 0;
    o.no_rx_notify = below(15) == 0;
    o.bogus_ring_ref = below(15) == 0;
    return o;
}

static bool expected_refusal(const struct nf_opts *o)
{
    return o->queues > 4 || o->no_rx_copy || o->no_rx_notify || o->bogus_ring_ref;
}

static void clean_close(void)
{
    nf_write_state(T, XenbusStateClosing);
    if (nf_wait_state(T, T->be, 1u << XenbusStateClosed, 5000) < 0)
        DIE("the backend did not close: %s", T->err);
    nf_drop(T);
    nf_write_state(T, XenbusStateClosed);
}

/* A fresh connection must carry a valid frame: no hang. */
static void check_live(void)
{
    raw_mode = false;
    uint64_t ok0 = T->txs.ok;
    valid_frame(0);
    if (nf_tx_drain(T, 5000) < 0)
        DIE("fresh connection: a valid frame not answered");
    if (T->txs.ok == ok0)
        DIE("fresh connection: a valid frame refused (last status %d)", T->last_status);
}

static void one_connection(void)
{
    struct nf_opts o = random_opts();
    /* After a state written behind the backend's back, start from Closed: a
     * frontend that goes on at once can race the backend's own reconnection
     * (its brief InitWait) and meet its own stale keys - its problem, not a
     * backend fault. */
    if (dirty_state)
        clean_close();
    dirty_state = false;
    nf_drop(T);
    int r = nf_connect(T, &o);
    st.conns++;
    if (r < 0 && !expected_refusal(&o)) {
        /* Our own state games (a state written behind the backend's back) can
         * leave it reading stale keys: close cleanly, then it must connect. */
        clean_close();
        r = nf_connect(T, &o);
        if (r < 0)
            DIE("connect refused after a clean close: %s", T->err);
    }
    if (r < 0) {
        st.badconns++;
        return;
    }
    if (expected_refusal(&o))
        DIE("connected with options netback must refuse (queues %u, rx-copy %d, rx-notify %d, "
            "bogus ring %d)",
            o.queues, !o.no_rx_copy, !o.no_rx_notify, o.bogus_ring_ref);
    check_live();
    for (unsigned step = 0, steps = 20 + below(200); step < steps; step++) {
        unsigned qi = below(T->nq);
        switch (below(20)) {
        case 0:
        case 1:
        case 2:
        case 3:
            raw_tx(qi);
            break;
        case 4:
        case 5:
            if (!raw_mode) {
                unsigned k = 0;
                while (nbad_kinds[k])
                    k++;
                if (nbad_send(T, nbad_kinds[below(k)], &me, &peer) < 0)
                    DIE("malformed packet not answered ERROR/NULL: %s", T->err);
                st.bad++;
                last_op = "bad";
            } else {
                raw_tx(qi);
            }
            break;
        case 6:
            rewrite_tx(qi);
            break;
        case 7:
        case 8:
            rx_garbage(qi);
            break;
        case 9:
            if (below(8) == 0) {
                garbage_index(qi);
                poll_all(20);
                return; /* the backend goes Closing: next connection */
            }
            break;
        case 10:
            if (!raw_mode)
                mcast_flood();
            break;
        case 11:
            if (below(4) == 0)
                junk_keys();
            break;
        case 12:
            if (below(10) == 0) {
                nf_write_state(T, (int)below(9));
                T->keys_tampered = true;
                dirty_state = true;
                poll_all(10);
                return;
            }
            break;
        default:
            if (!raw_mode && RING_FREE_REQUESTS(&T->q[qi].tx) > 8)
                valid_frame(qi);
            break;
        }
        poll_all(below(3));
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 4) {
        fprintf(stderr, "usage: nhostile FE-DIR SEED SECONDS\n");
        return 2;
    }
    uint64_t seed = strtoull(argv[2], NULL, 10);
    unsigned secs = (unsigned)strtoul(argv[3], NULL, 10);
    rng_state = seed * 2654435761u + 1;
    printf("seed=%llu\n", (unsigned long long)seed);
    T = nf_open(argv[1]);
    if (!T)
        return 1;
    memcpy(me.mac, T->mac, 6);
    uint64_t end = nf_now_ms() + (uint64_t)secs * 1000u;
    while (nf_now_ms() < end)
        one_connection();
    /* A clean connection at the end: the backend still serves. */
    struct nf_opts o;
    nf_default_opts(&o);
    o.timeout_ms = 10000;
    nf_drop(T);
    if (nf_connect(T, &o) < 0)
        DIE("final clean connection: %s", T->err);
    check_live();
    if (nf_close(T) < 0)
        DIE("final close: %s", T->err);
    printf("HOSTILE-OK connections %llu (%llu refused as expected), valid %llu, raw %llu, "
           "malformed %llu, rx junk %llu, rewrites %llu, garbage indexes %llu, multicast ops %llu, "
           "junk keys %llu\n",
           (unsigned long long)st.conns, (unsigned long long)st.badconns,
           (unsigned long long)st.valid, (unsigned long long)st.raw, (unsigned long long)st.bad,
           (unsigned long long)st.rxgarbage, (unsigned long long)st.rewrites,
           (unsigned long long)st.garbage, (unsigned long long)st.mcast,
           (unsigned long long)st.keys);
    nf_free(T);
    return 0;
}
