/* bb_fault.c - injected faults (USK_DRV_INJECT): corrupt responses, hang
 * (stop consuming requests), slow (delay every response). A new fault ends
 * a hang; "slow 0" ends the delay. Faults belong to the device and outlive
 * a reconnection, as a hung or slow disk would.
 */
#define _GNU_SOURCE
#include "bb.h"

#include <inttypes.h>

/* An int16 status no backend can send (blkif.h defines -2..0). */
#define BB_IMPOSSIBLE_STATUS 0x7fff
#define BB_MAX_SLOW_MS       600000u

static void end_hang(void *opaque)
{
    struct bb_dev *d = opaque;
    if (!be_fault_mode_hang_over(&d->fm))
        return;
    BE_LOG(d->be, "hang over: serving requests again");
    bb_run(d);
}

static void deliver_due(void *opaque);

static void arm_delay(struct bb_dev *d)
{
    if (d->delay_timer || !d->delayed_head)
        return;
    uint64_t now = be_now_ms(), due = d->delayed_head->due_ms;
    d->delay_timer =
        be_loop_add_timer(be_loop_of(d->be), due > now ? due - now : 0, deliver_due, d);
}

static void deliver_due(void *opaque)
{
    struct bb_dev *d = opaque;
    d->delay_timer = 0;
    uint64_t now = be_now_ms();
    while (d->delayed_head && (d->delayed_head->due_ms <= now || !d->fm.slow_ms)) {
        struct bb_req *r = d->delayed_head;
        d->delayed_head = r->next;
        if (!d->delayed_head)
            d->delayed_tail = &d->delayed_head;
        r->next = NULL;
        bb_ring_respond(r);
    }
    for (unsigned i = 0; i < d->nqueues; i++)
        bb_ring_push(&d->q[i]);
    arm_delay(d);
    bb_run(d); /* slots were freed */
}

void bb_fault_deliver(struct bb_dev *d, struct bb_req *r)
{
    if (!d->fm.slow_ms && !d->delayed_head) {
        bb_ring_respond(r);
        return;
    }
    /* Behind earlier delayed ones, so that order is kept. */
    r->due_ms = be_now_ms() + d->fm.slow_ms;
    r->next = NULL;
    *d->delayed_tail = r;
    d->delayed_tail = &r->next;
    arm_delay(d);
}

void bb_fault_response(struct bb_dev *d, blkif_response_t *rsp)
{
    if (!be_fault_mode_take_corrupt(&d->fm))
        return;
    /* Alternate the two kinds, so a frontend's checks for both are exercised. */
    if (d->corrupted++ % 2 == 0)
        rsp->id = ~rsp->id;
    else
        rsp->status = BB_IMPOSSIBLE_STATUS;
    BE_LOG(d->be, "fault: corrupted response (id %#" PRIx64 " status %d)", rsp->id, rsp->status);
}

void bb_fault(struct be_dev *be, const struct be_fault *f)
{
    struct bb_dev *d = be_priv(be);
    be_fault_mode_apply(be, &d->fm, f, BB_MAX_SLOW_MS, end_hang, d);
    if (!d->fm.slow_ms && d->delayed_head) {
        be_loop_del_timer(be_loop_of(be), d->delay_timer);
        deliver_due(d); /* the delay is over: everything held is due */
    }
    bb_run(d);
}

void bb_fault_stop(struct bb_dev *d)
{
    be_loop_del_timer(be_loop_of(d->be), d->delay_timer);
    d->delay_timer = 0;
    while (d->delayed_head) {
        struct bb_req *r = d->delayed_head;
        d->delayed_head = r->next;
        bb_req_release(r);
    }
    d->delayed_tail = &d->delayed_head;
}
