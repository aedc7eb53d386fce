/* bb_ring.c - one queue's shared ring: taking requests off it, writing
 * responses into it; the core publishes them (be_ring_publish, where the
 * fault layer sits). Everything read from the ring is copied first; the
 * frontend's producer index is range-checked before any slot is touched.
 */
#define _GNU_SOURCE
#include "bb.h"

#include <errno.h>

void bb_ring_event(struct be_dev *be, struct be_ring *r, void *opaque)
{
    (void)be;
    (void)r;
    struct bb_queue *q = opaque;
    bb_run(q->d);
}

/* Could the next request's pages be mapped within BB_MAPPED_MAX? */
static bool room_to_map(const struct bb_dev *d)
{
    unsigned most = d->lim.max_indirect > BLKIF_MAX_SEGMENTS_PER_REQUEST
                        ? d->lim.max_indirect
                        : BLKIF_MAX_SEGMENTS_PER_REQUEST;
    return d->mapped + most <= BB_MAPPED_MAX;
}

static bool stopped(struct bb_queue *q)
{
    return q->broken || be_fault_hung(q->d->be) || q->d->barrier || !room_to_map(q->d);
}

/* One pass: take what the ring holds (up to a barrier, as long as there is
 * room to map), then map and start it all at once (bb_pass.c): a batch the
 * frontend pushed together costs a few map calls, not one per page. */
bool bb_ring_consume(struct bb_queue *q)
{
    bool any = false;
    if (!q->attached)
        return false;
    while (!stopped(q)) {
        RING_IDX rp = be_ring_req_prod(&q->ring);
        if (!be_ring_prod_ok(rp, q->br.req_cons, q->br.rsp_prod_pvt, RING_SIZE(&q->br))) {
            q->broken = true;
            be_fail(q->d->be, EPROTO,
                    "queue %u: frontend's req_prod %u is %u requests past our responses on a "
                    "ring of %u: not serving this ring",
                    q->idx, rp, rp - q->br.rsp_prod_pvt, RING_SIZE(&q->br));
            break;
        }
        unsigned n = 0;
        bool barrier = false;
        /* At most one request per free slot: q->pass has room for them all. */
        while (q->br.req_cons != rp && !barrier && !stopped(q) && q->free &&
               !RING_REQUEST_CONS_OVERFLOW(&q->br, q->br.req_cons)) {
            struct bb_req *r = q->free;
            q->free = r->next;
            r->next = NULL;
            blkif_request_t req;
            RING_COPY_REQUEST(&q->br, q->br.req_cons, &req);
            q->br.req_cons++;
            any = true;
            if (!q->d->first_taken && q->d->nreq == 0)
                q->d->first_taken = bb_now_ns();
            if (bb_accept(r, &req)) {
                q->pass[n++] = r;
                /* Nothing after a barrier is taken before it is answered. */
                barrier = r->p.kind == BB_BARRIER;
            }
        }
        bb_pass_run(q, q->pass, n);
        if (stopped(q))
            break;
        int more;
        RING_FINAL_CHECK_FOR_REQUESTS(&q->br, more);
        if (!more)
            break;
    }
    return any;
}

void bb_ring_respond(struct bb_req *r)
{
    struct bb_queue *q = r->q;
    if (q->attached && !q->broken) {
        blkif_response_t rsp = {.id = r->p.id, .operation = r->p.rsp_op, .status = r->status};
        *RING_GET_RESPONSE(&q->br, q->br.rsp_prod_pvt) = rsp;
        q->br.rsp_prod_pvt++;
        q->push = true;
    }
    bb_req_release(r);
}

/* The connection's first answer: how long the first requests waited (after
 * a hot standby's promotion, the replay's), and what mapping them cost. */
static void log_first_answer(struct bb_dev *d)
{
    uint64_t maps = 0, calls = 0;
    for (unsigned i = 0; i < d->nqueues; i++) {
        maps += bb_pgcache_maps(d->q[i].pgc);
        calls += bb_pgcache_calls(d->q[i].pgc);
    }
    BE_LOG(d->be,
           "first answer %.2f ms after the first request was taken (%llu taken; persistent "
           "grants: %llu pages mapped in %llu calls)",
           (double)(bb_now_ns() - d->first_taken) / 1e6, (unsigned long long)d->nreq,
           (unsigned long long)maps, (unsigned long long)calls);
    d->first_taken = 0;
}

void bb_ring_push(struct bb_queue *q)
{
    if (!q->push)
        return;
    q->push = false;
    be_ring_publish(q->d->be, &q->ring, q->br.rsp_prod_pvt);
    if (q->d->first_taken)
        log_first_answer(q->d);
}
