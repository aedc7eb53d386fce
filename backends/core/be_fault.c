/* be_fault.c - the fault layer: injected faults (USK_DRV_INJECT) applied
 * around the classes, as a filter sits between two layers. A class writes
 * responses and hands them to be_ring_publish; this layer, on the way to
 * the shared page, corrupts the next N of them through the class's corrupt
 * hook ("corrupt N": a wrong id, then an impossible status, alternately),
 * and holds each publication back for a while ("slow MS": responses are
 * made visible MS late, in order; "slow 0" releases everything held). The
 * hang gate ("hang [MS]") keeps ring events from the class and tells it,
 * through be_fault_hung, to take no requests; when the hang ends (after MS,
 * or at any new fault) every ring is kicked. Faults belong to the device and
 * outlive a reconnection, as a hung or slow disk or NIC would.
 */
#define _GNU_SOURCE
#include "be_internal.h"

#include <stdint.h>
#include <string.h>

/* The longest "slow" delay taken (10 minutes). */
#define BE_MAX_SLOW_MS 600000u

bool be_fault_hung(struct be_dev *be)
{
    return be->fm.hang;
}

static void hang_over(void *opaque)
{
    struct be_dev *be = opaque;
    if (!be_fault_mode_hang_over(&be->fm))
        return;
    BE_LOG(be, "hang over: serving requests again");
    be_ring_kick_all(be);
}

static void deliver_due(void *opaque);

/* The timer for the earliest held publication, on any ring. */
static void arm(struct be_dev *be)
{
    if (be->delay_timer)
        return;
    uint64_t due = UINT64_MAX;
    for (unsigned i = 0; i < BE_MAX_RINGS; i++) {
        struct be_ring *r = be->rings[i];
        if (r && r->ndelay && r->delay[0].due_ms < due)
            due = r->delay[0].due_ms;
    }
    if (due == UINT64_MAX)
        return;
    uint64_t now = be_now_ms();
    be->delay_timer = be_loop_add_timer(be->loop, due > now ? due - now : 0, deliver_due, be);
}

/* Publish what is due on r (everything, once slow is over). */
static void due_on(struct be_dev *be, struct be_ring *r, uint64_t now)
{
    unsigned k = 0;
    while (k < r->ndelay && (r->delay[k].due_ms <= now || !be->fm.slow_ms))
        k++;
    if (!k)
        return;
    be_ring_expose(be, r, r->delay[k - 1].idx);
    r->ndelay -= k;
    memmove(r->delay, r->delay + k, r->ndelay * sizeof(r->delay[0]));
}

static void deliver_due(void *opaque)
{
    struct be_dev *be = opaque;
    be->delay_timer = 0;
    uint64_t now = be_now_ms();
    for (unsigned i = 0; i < BE_MAX_RINGS; i++)
        if (be->rings[i])
            due_on(be, be->rings[i], now);
    arm(be);
}

/* "corrupt N": the class corrupts the next responses handed over. */
static void corrupt_new(struct be_dev *be, struct be_ring *r, RING_IDX upto)
{
    for (RING_IDX i = r->handed; i != upto && be->fm.corrupt_left && be->ops->corrupt; i++) {
        enum be_corrupt how = be->corrupted % 2 ? BE_CORRUPT_STATUS : BE_CORRUPT_ID;
        if (be->ops->corrupt(be, r, i, how)) {
            be_fault_mode_take_corrupt(&be->fm);
            be->corrupted++;
        }
    }
    r->handed = upto;
}

void be_fault_publish(struct be_dev *be, struct be_ring *r, RING_IDX upto)
{
    corrupt_new(be, r, upto);
    if (!be->fm.slow_ms && !r->ndelay) {
        be_ring_expose(be, r, upto);
        return;
    }
    /* Behind the publications held already, so that order is kept. */
    if (r->ndelay && r->delay[r->ndelay - 1].idx == upto)
        return; /* nothing new */
    struct be_delay next = {.idx = upto, .due_ms = be_now_ms() + be->fm.slow_ms};
    if (r->ndelay == BE_MAX_DELAYS)
        r->delay[r->ndelay - 1] = next; /* the last one's later than planned, never earlier */
    else
        r->delay[r->ndelay++] = next;
    arm(be);
}

void be_fault_take(struct be_dev *be, const struct be_fault *f)
{
    be_fault_mode_apply(be, &be->fm, f, BE_MAX_SLOW_MS, hang_over, be);
    if (!be->fm.slow_ms && be->delay_timer) {
        be_loop_del_timer(be->loop, be->delay_timer);
        deliver_due(be); /* the delay is over: everything held is due */
    }
    if (be->ops->fault)
        be->ops->fault(be, f);
    if (!be->fm.hang)
        be_ring_kick_all(be); /* a hang this fault ended, or anything new to serve */
}
