/* test-common-xen-barriers.c - T0 test of common/xen_barriers.h: xen/io
 * ring macros built on its barriers carry every request from a producer
 * thread to a consumer thread and every response back, in order, with the
 * notify checks (the event-index protocol) never losing a wakeup. The
 * netif, blkif and sndif headers all compile over it. */
#define _GNU_SOURCE
#include "xen_barriers.h"

#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <xen/io/blkif.h>
#include <xen/io/netif.h>
#include <xen/io/sndif.h>

struct t_req {
    uint32_t seq;
};
struct t_rsp {
    uint32_t seq;
};
DEFINE_RING_TYPES(t, struct t_req, struct t_rsp);

#define PAGE  4096u
#define COUNT 200000u

static union {
    struct t_sring s;
    uint8_t page[PAGE];
} shared;

/* Stand-ins for event channels: a count of notifications each way. */
static unsigned to_back, to_front;

static void *backend(void *arg)
{
    (void)arg;
    t_back_ring_t b;
    BACK_RING_ATTACH(&b, &shared.s, 0, PAGE);
    uint32_t want = 0;
    while (want < COUNT) {
        int more;
        RING_FINAL_CHECK_FOR_REQUESTS(&b, more);
        if (!more) {
            sched_yield();
            continue;
        }
        RING_IDX rc = b.req_cons, rp = b.sring->req_prod;
        rmb(); /* the index before the requests it covers */
        for (; rc != rp; rc++) {
            struct t_req *q = RING_GET_REQUEST(&b, rc);
            CHECK_EQ(q->seq, want);
            want++;
            RING_GET_RESPONSE(&b, b.rsp_prod_pvt)->seq = q->seq;
            b.rsp_prod_pvt++;
        }
        b.req_cons = rc;
        int notify;
        RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(&b, notify);
        if (notify)
            __atomic_add_fetch(&to_front, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void test_two_threads(void)
{
    SHARED_RING_INIT(&shared.s);
    t_front_ring_t f;
    FRONT_RING_ATTACH(&f, &shared.s, 0, PAGE);
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, backend, NULL), 0);
    uint32_t sent = 0, got = 0;
    while (got < COUNT) {
        while (sent < COUNT && !RING_FULL(&f)) {
            RING_GET_REQUEST(&f, f.req_prod_pvt)->seq = sent++;
            f.req_prod_pvt++;
        }
        int notify;
        RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&f, notify);
        if (notify)
            __atomic_add_fetch(&to_back, 1, __ATOMIC_RELAXED);
        int more;
        RING_FINAL_CHECK_FOR_RESPONSES(&f, more);
        if (!more) {
            sched_yield();
            continue;
        }
        RING_IDX rc = f.rsp_cons, rp = f.sring->rsp_prod;
        rmb(); /* the index before the responses it covers */
        for (; rc != rp; rc++) {
            uint32_t s = RING_GET_RESPONSE(&f, rc)->seq;
            if (s != got) {
                CHECK_EQ(s, got);
                break;
            }
            got++;
        }
        f.rsp_cons = rc;
    }
    CHECK_EQ(pthread_join(th, NULL), 0);
    CHECK_EQ(got, COUNT);
    CHECK(to_back > 0 && to_front > 0);
}

static void test_headers(void)
{
    /* Ring sizes as the protocols state them for one 4 KiB page. */
    CHECK_EQ(__CONST_RING_SIZE(netif_tx, PAGE), 256);
    CHECK_EQ(__CONST_RING_SIZE(netif_rx, PAGE), 256);
    CHECK_EQ(__CONST_RING_SIZE(blkif, PAGE), 32);
    CHECK(__CONST_RING_SIZE(xen_sndif, PAGE) > 0);
}

int main(void)
{
    test_headers();
    test_two_threads();
    return check_done("test-common-xen-barriers");
}
