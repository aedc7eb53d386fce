/* blk_ring.c - one queue's shared ring: taking requests off it, writing
 * responses onto it. Everything read from the ring is copied first; the
 * frontend's producer index is range-checked before any slot is touched.
 */
#define _GNU_SOURCE
#include "blk.h"

#include <errno.h>

void blk_ring_event(struct be_dev *be, struct be_ring *r, void *opaque)
{
    (void)be;
    (void)r;
    struct blk_queue *q = opaque;
    blk_run(q->d);
}

static bool stopped(struct blk_queue *q)
{
    return q->broken || q->d->fm.hang || q->d->barrier;
}

bool blk_ring_consume(struct blk_queue *q)
{
    bool any = false;
    if (!q->attached)
        return false;
    while (!stopped(q)) {
        RING_IDX rp = __atomic_load_n(&q->br.sring->req_prod, __ATOMIC_ACQUIRE);
        if (RING_REQUEST_PROD_OVERFLOW(&q->br, rp)) {
            q->broken = true;
            be_fail(q->d->be, EPROTO,
                    "queue %u: frontend's req_prod %u is %u requests past our responses on a "
                    "ring of %u: not serving this ring",
                    q->idx, rp, rp - q->br.rsp_prod_pvt, RING_SIZE(&q->br));
            break;
        }
        while (q->br.req_cons != rp && !stopped(q) && q->free &&
               !RING_REQUEST_CONS_OVERFLOW(&q->br, q->br.req_cons)) {
            struct blk_req *r = q->free;
            q->free = r->next;
            r->next = NULL;
            blkif_request_t req;
            RING_COPY_REQUEST(&q->br, q->br.req_cons, &req);
            q->br.req_cons++;
            any = true;
            blk_dispatch(r, &req);
        }
        if (stopped(q))
            break;
        int more;
        RING_FINAL_CHECK_FOR_REQUESTS(&q->br, more);
        if (!more)
            break;
    }
    return any;
}

void blk_ring_respond(struct blk_req *r)
{
    struct blk_queue *q = r->q;
    if (q->attached && !q->broken) {
        blkif_response_t rsp = {.id = r->p.id, .operation = r->p.rsp_op, .status = r->status};
        blk_fault_response(q->d, &rsp);
        *RING_GET_RESPONSE(&q->br, q->br.rsp_prod_pvt) = rsp;
        q->br.rsp_prod_pvt++;
        q->push = true;
    }
    blk_req_release(r);
}

void blk_ring_push(struct blk_queue *q)
{
    if (!q->push)
        return;
    q->push = false;
    int notify;
    RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(&q->br, notify);
    if (notify)
        be_ring_notify(q->d->be, &q->ring);
}
