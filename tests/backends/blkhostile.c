/* blkhostile - a hostile blkif frontend: for a bounded time, random
 * (seeded) requests, garbage ring indexes, random grant refs, rings that
 * cannot be mapped, reconnections. Every request the backend took must be
 * answered, with a known id and a status blkif.h defines; at the end a
 * clean connection must still write and read verified data.
 *
 *   blkhostile FE-DIR SEED SECONDS
 * Prints "seed=<S>" first and "HOSTILE-OK ..." on success.
 */
#define _GNU_SOURCE
#include "tfront.h"

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

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct tf *T;
static struct {
    uint64_t sent, answered, ok, err, notsupp, garbage, reconnects, badconnects, clobbers;
} st;

/* Set when a request of the current batch names one of our own ring pages
 * as a data page: a read into it writes disk data over the ring. */
static bool named_ring;

#define DIE(...)                                                                                   \
    do {                                                                                           \
        printf("HOSTILE-FAIL: " __VA_ARGS__);                                                      \
        printf(" (%s)\n", T->err);                                                                 \
        exit(1);                                                                                   \
    } while (0)

static bool is_ring_ref(uint32_t ref)
{
    for (unsigned qi = 0; qi < T->nq; qi++)
        for (unsigned i = 0; i < (1u << T->o.order); i++)
            if (T->q[qi].ring_refs[i] == ref)
                return true;
    return false;
}

/* Does an indirect page name a ring page? (Its contents outlive a batch.) */
static bool ind_pages_name_ring(void)
{
    const struct blkif_request_segment *s = (const void *)T->ind;
    for (unsigned i = 0; i < TF_IND_PAGES * TF_PAGE / sizeof(*s); i++)
        if (is_ring_ref(s[i].gref))
            return true;
    return false;
}

static uint32_t some_gref(void)
{
    uint32_t ref;
    switch (below(5)) {
    case 0:
        ref = (uint32_t)rnd();
        break;
    case 1:
        ref = below(64); /* low refs: some reserved, some our own ring pages */
        break;
    case 2:
        ref = T->ind_refs[below(TF_IND_PAGES)];
        break;
    default:
        ref = T->data_refs[below(TF_DATA_PAGES)];
        break;
    }
    if (is_ring_ref(ref))
        named_ring = true;
    return ref;
}

static uint64_t some_sector(void)
{
    switch (below(4)) {
    case 0:
        return rnd();
    case 1:
        return T->sectors - below(16);
    default:
        return rnd() % T->sectors;
    }
}

static void random_request(blkif_request_t *req)
{
    if (below(4) == 0) { /* pure noise */
        unsigned char *p = (void *)req;
        for (size_t i = 0; i < sizeof(*req); i++)
            p[i] = (unsigned char)rnd();
        return;
    }
    memset(req, 0, sizeof(*req));
    static const uint8_t ops[] = {0, 1, 1, 2, 3, 4, 5, 6, 6, 7, 200};
    req->operation = ops[below(sizeof(ops))];
    req->nr_segments = (uint8_t)(below(8) == 0 ? rnd() : below(13));
    req->sector_number = some_sector();
    req->id = rnd();
    for (unsigned i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++) {
        req->seg[i].gref = some_gref();
        req->seg[i].first_sect = (uint8_t)(below(6) == 0 ? below(12) : 0);
        req->seg[i].last_sect = (uint8_t)(below(6) == 0 ? below(12) : 7);
    }
    if (req->operation == BLKIF_OP_DISCARD) {
        struct blkif_request_discard d;
        memcpy(&d, req, sizeof(d));
        d.nr_sectors = below(3) == 0 ? rnd() : below(4096);
        memcpy(req, &d, sizeof(d));
    } else if (req->operation == BLKIF_OP_INDIRECT) {
        struct blkif_request_indirect ir;
        memcpy(&ir, req, sizeof(ir));
        ir.indirect_op = (uint8_t)(below(5) == 0 ? rnd() : below(2));
        ir.nr_segments = (uint16_t)(below(5) == 0 ? rnd() : below(300));
        for (unsigned i = 0; i < BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST; i++)
            ir.indirect_grefs[i] = below(3) ? T->ind_refs[below(TF_IND_PAGES)] : some_gref();
        memcpy(req, &ir, sizeof(ir));
    }
}

static void scribble_indirect_pages(void)
{
    struct blkif_request_segment *s = (void *)T->ind;
    for (unsigned i = 0; i < TF_IND_PAGES * TF_PAGE / sizeof(*s); i++) {
        s[i].gref = below(4) ? T->data_refs[below(TF_DATA_PAGES)] : some_gref();
        s[i].first_sect = (uint8_t)(below(8) == 0 ? below(12) : 0);
        s[i].last_sect = (uint8_t)(below(8) == 0 ? below(12) : 7);
    }
}

static void random_opts(struct tf_opts *o);
static void reconnect(const struct tf_opts *o);

/* The backend stopped serving a ring we clobbered ourselves? */
static bool stopped_for_our_clobber(void)
{
    return (named_ring || ind_pages_name_ring()) &&
           tf_wait_state(T, T->be, 1u << XenbusStateClosing | 1u << XenbusStateClosed, 0) >= 0;
}

/* k random requests on queue qi; every one must be answered, unless a read
 * went into one of our own ring pages (then the backend must go Closing). */
static void batch(unsigned qi, unsigned k)
{
    struct tf_queue *q = &T->q[qi];
    unsigned free_slots = RING_FREE_REQUESTS(&q->fr);
    if (k > free_slots)
        k = free_slots;
    bool scribbled = false;
    named_ring = false;
    for (unsigned i = 0; i < k; i++) {
        blkif_request_t req;
        random_request(&req);
        tf_push(T, qi, &req);
        /* Sometimes rewrite the slot after pushing: the backend must use its copy. */
        if (below(10) == 0) {
            random_request(RING_GET_REQUEST(&q->fr, q->fr.req_prod_pvt - 1));
            scribbled = true;
        }
    }
    /* We may have scribbled on req_event, which decides whether tf_push
     * notifies: notify anyway, or a missed wake-up would be our own doing. */
    xenevtchn_notify(T->xce, q->port);
    T->err[0] = 0;
    /* A slot rewritten after the push may already hold the backend's
     * response: what we then read there is our own scribble. */
    st.sent += k;
    for (unsigned got = 0; got < k;) {
        blkif_response_t rsp;
        int r = 0;
        bool clobbered = false;
        for (unsigned waited = 0; waited < 15000 && r == 0 && !clobbered; waited += 500) {
            r = tf_next_response(T, qi, 500, &rsp);
            /* Looked at only while no answer comes (a page scan and a read). */
            if (r <= 0)
                clobbered = stopped_for_our_clobber();
        }
        if (clobbered) {
            /* We handed the backend our own ring page to read into: the
             * ring it then reads back is garbage, so it stops serving it
             * (Closing) and what was in flight has nowhere to be answered. */
            st.clobbers++;
            struct tf_opts o;
            random_opts(&o);
            reconnect(&o);
            return;
        }
        if (r < 0)
            DIE("queue %u: broken response ring", qi);
        if (r == 0)
            DIE("queue %u: %u of %u requests unanswered after 15 s", qi, k - got, k);
        got++;
        st.answered++;
        if (rsp.status == BLKIF_RSP_OKAY)
            st.ok++;
        else if (rsp.status == BLKIF_RSP_ERROR)
            st.err++;
        else if (rsp.status == BLKIF_RSP_EOPNOTSUPP)
            st.notsupp++;
        else if (!scribbled)
            DIE("response id %#llx with impossible status %d", (unsigned long long)rsp.id,
                rsp.status);
    }
}

static void random_opts(struct tf_opts *o)
{
    tf_default_opts(o);
    o->queues = 1 + below(2);
    o->order = below(3);
    o->write_order = below(2);
    o->persistent = below(2);
    o->indirect = true;
    o->timeout_ms = 15000;
}

static void reconnect(const struct tf_opts *o)
{
    if (tf_write_state(T, XenbusStateInitialising) < 0 ||
        tf_wait_state(T, T->be, 1u << XenbusStateInitWait, 15000) < 0)
        DIE("backend did not return to InitWait");
    tf_drop(T);
    if (tf_connect(T, o) < 0)
        DIE("reconnect");
    st.reconnects++;
}

/* A ring-ref the backend cannot map: it must refuse, then accept a good one. */
static void bad_connect(void)
{
    struct tf_opts o;
    random_opts(&o);
    o.queues = 1;
    o.order = 0;
    o.write_order = false;
    o.bogus_ring_ref = true;
    if (tf_write_state(T, XenbusStateInitialising) < 0 ||
        tf_wait_state(T, T->be, 1u << XenbusStateInitWait, 15000) < 0)
        DIE("backend did not return to InitWait");
    tf_drop(T);
    if (tf_connect(T, &o) == 0)
        DIE("backend connected to a ring it cannot have mapped");
    st.badconnects++;
    random_opts(&o);
    reconnect(&o);
}

static void garbage_index(void)
{
    struct tf_queue *q = &T->q[below(T->nq)];
    RING_IDX bad = below(2) ? q->fr.req_prod_pvt + RING_SIZE(&q->fr) + 1 + (RING_IDX)rnd() % 100000
                            : q->fr.rsp_cons - 1 - below(1000);
    __atomic_store_n(&q->fr.sring->req_prod, bad, __ATOMIC_RELEASE);
    xenevtchn_notify(T->xce, q->port);
    if (tf_wait_state(T, T->be, 1u << XenbusStateClosing, 15000) < 0)
        DIE("garbage req_prod %u: backend did not go Closing", bad);
    st.garbage++;
    struct tf_opts o;
    random_opts(&o);
    reconnect(&o);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 4) {
        fprintf(stderr, "usage: blkhostile FE-DIR SEED SECONDS\n");
        return 2;
    }
    uint64_t seed = strtoull(argv[2], NULL, 0);
    unsigned secs = (unsigned)strtoul(argv[3], NULL, 0);
    printf("seed=%llu\n", (unsigned long long)seed);
    rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
    T = tf_open(argv[1]);
    if (!T)
        return 1;
    struct tf_opts o;
    random_opts(&o);
    if (tf_connect(T, &o) < 0)
        DIE("first connect");
    uint64_t end = now_ms() + (uint64_t)secs * 1000;
    while (now_ms() < end) {
        unsigned a = below(100);
        if (a < 75) {
            if (below(4) == 0)
                scribble_indirect_pages();
            batch(below(T->nq), 1 + below(40));
        } else if (a < 85) {
            /* Random bytes in the ring header's event and padding fields. */
            struct tf_queue *q = &T->q[below(T->nq)];
            q->fr.sring->req_event = (RING_IDX)rnd();
            q->fr.sring->pvt.pvt_pad[0] = (uint8_t)rnd();
            q->fr.sring->__pad[below(44)] = (uint8_t)rnd();
            batch(below(T->nq), 1);
        } else if (a < 90) {
            garbage_index();
        } else if (a < 95) {
            random_opts(&o);
            reconnect(&o);
        } else if (a < 97) {
            bad_connect();
        }
    }
    /* The end: a clean connection must work. */
    tf_default_opts(&o);
    o.timeout_ms = 15000;
    reconnect(&o);
    enum { N = 256 };
    static unsigned char want[N * TF_SECTOR], got[N * TF_SECTOR];
    tf_pattern(want, 1000, N, seed);
    if (tf_rw(T, BLKIF_OP_WRITE, 1000, N, want) < 0 || tf_rw(T, BLKIF_OP_READ, 1000, N, got) < 0)
        DIE("final good write/read");
    if (memcmp(want, got, sizeof(want)))
        DIE("final read returned the wrong data");
    printf("HOSTILE-OK seed=%llu sent=%llu answered=%llu ok=%llu error=%llu eopnotsupp=%llu "
           "garbage-indexes=%llu reconnects=%llu refused-rings=%llu ring-clobbers=%llu\n",
           (unsigned long long)seed, (unsigned long long)st.sent, (unsigned long long)st.answered,
           (unsigned long long)st.ok, (unsigned long long)st.err, (unsigned long long)st.notsupp,
           (unsigned long long)st.garbage, (unsigned long long)st.reconnects,
           (unsigned long long)st.badconnects, (unsigned long long)st.clobbers);
    tf_close(T);
    tf_free(T);
    return 0;
}
