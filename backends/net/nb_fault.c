/* nb_fault.c - injected faults (USK_DRV_INJECT) and the pushing of
 * responses they can delay. corrupt N: the next N responses (tx or rx)
 * alternate an unknown id (~id) and an impossible status (0x7fff: no tx
 * status, and more than a page for rx); hang [ms]: neither ring is served
 * and the TAP is not read, until the next seq or for ms; slow ms: responses
 * are written at once but made visible (rsp_prod) ms later, in order.
 * Faults belong to the device and outlive a reconnection.
 */
#define _GNU_SOURCE
#include "nb.h"

#include <inttypes.h>

#define NB_IMPOSSIBLE_STATUS 0x7fff
#define NB_MAX_SLOW_MS       600000u

static bool corrupt(struct nb_dev *d, uint16_t *id, int16_t *status)
{
    if (!be_fault_mode_take_corrupt(&d->fm))
        return false;
    if (d->corrupted++ % 2 == 0)
        *id = (uint16_t) ~*id;
    else
        *status = NB_IMPOSSIBLE_STATUS;
    BE_LOG(d->be, "fault: corrupted response (id %#x status %d)", *id, *status);
    return true;
}

bool nb_fault_corrupt_tx(struct nb_dev *d, netif_tx_response_t *rsp)
{
    return corrupt(d, &rsp->id, &rsp->status);
}

bool nb_fault_corrupt_rx(struct nb_dev *d, netif_rx_response_t *rsp)
{
    return corrupt(d, &rsp->id, &rsp->status);
}

/* Make responses up to upto visible; true if the frontend asked for an event. */
static bool publish(RING_IDX *rsp_prod, RING_IDX *rsp_event, RING_IDX upto)
{
    RING_IDX old = __atomic_load_n(rsp_prod, __ATOMIC_RELAXED);
    wmb(); /* the frontend sees the responses /before/ the producer index */
    __atomic_store_n(rsp_prod, upto, __ATOMIC_RELAXED);
    mb(); /* ... and the new index /before/ we read its rsp_event */
    RING_IDX ev = __atomic_load_n(rsp_event, __ATOMIC_RELAXED);
    return (RING_IDX)(upto - ev) < (RING_IDX)(upto - old);
}

static void push_to(struct nb_queue *q, bool tx, RING_IDX upto)
{
    bool notify = tx ? publish(&q->tx.sring->rsp_prod, &q->tx.sring->rsp_event, upto)
                     : publish(&q->rx.sring->rsp_prod, &q->rx.sring->rsp_event, upto);
    if (notify)
        be_ring_notify(q->d->be, tx ? &q->txr : q->rx_notify);
}

static void deliver_due(void *opaque);

static void arm(struct nb_dev *d)
{
    if (d->delay_timer)
        return;
    uint64_t due = UINT64_MAX;
    for (unsigned i = 0; i < d->nq; i++) {
        struct nb_queue *q = &d->q[i];
        if (q->ntdelay && q->tdelay[0].due_ms < due)
            due = q->tdelay[0].due_ms;
        if (q->nrdelay && q->rdelay[0].due_ms < due)
            due = q->rdelay[0].due_ms;
    }
    if (due == UINT64_MAX)
        return;
    uint64_t now = be_now_ms();
    d->delay_timer =
        be_loop_add_timer(be_loop_of(d->be), due > now ? due - now : 0, deliver_due, d);
}

/* Push what is due on one ring's list (everything once slow is over). */
static void due_on(struct nb_queue *q, bool tx, uint64_t now)
{
    struct nb_delay *l = tx ? q->tdelay : q->rdelay;
    unsigned *n = tx ? &q->ntdelay : &q->nrdelay, k = 0;
    while (k < *n && (l[k].due_ms <= now || !q->d->fm.slow_ms))
        k++;
    if (!k)
        return;
    push_to(q, tx, l[k - 1].idx);
    *n -= k;
    for (unsigned i = 0; i < *n; i++)
        l[i] = l[i + k];
}

static void deliver_due(void *opaque)
{
    struct nb_dev *d = opaque;
    d->delay_timer = 0;
    uint64_t now = be_now_ms();
    for (unsigned i = 0; i < d->nq; i++) {
        due_on(&d->q[i], true, now);
        due_on(&d->q[i], false, now);
    }
    arm(d);
}

static void push(struct nb_queue *q, bool tx)
{
    struct nb_dev *d = q->d;
    RING_IDX pvt = tx ? q->tx.rsp_prod_pvt : q->rx.rsp_prod_pvt;
    struct nb_delay *l = tx ? q->tdelay : q->rdelay;
    unsigned *n = tx ? &q->ntdelay : &q->nrdelay;
    if (!d->fm.slow_ms && !*n) {
        push_to(q, tx, pvt);
        return;
    }
    uint64_t due = be_now_ms() + d->fm.slow_ms;
    if (*n == NB_MAX_DELAYS) {
        l[*n - 1].idx = pvt; /* later than planned for these, never earlier */
    } else {
        l[*n] = (struct nb_delay){.idx = pvt, .due_ms = due};
        (*n)++;
    }
    arm(d);
}

void nb_push_tx(struct nb_queue *q)
{
    push(q, true);
}

void nb_push_rx(struct nb_queue *q)
{
    push(q, false);
}

static void end_hang(void *opaque)
{
    struct nb_dev *d = opaque;
    if (!be_fault_mode_hang_over(&d->fm))
        return;
    BE_LOG(d->be, "hang over: serving the rings again");
    nb_run_all(d);
}

void nb_fault(struct be_dev *be, const struct be_fault *f)
{
    struct nb_dev *d = be_priv(be);
    be_fault_mode_apply(be, &d->fm, f, NB_MAX_SLOW_MS, end_hang, d);
    if (d->fm.hang)
        for (unsigned i = 0; i < d->nq; i++)
            nb_queue_watch(&d->q[i], false);
    if (!d->fm.slow_ms && d->delay_timer) {
        be_loop_del_timer(be_loop_of(be), d->delay_timer);
        deliver_due(d); /* the delay is over: everything held is due */
    }
    if (!d->fm.hang)
        nb_run_all(d);
}

void nb_fault_stop(struct nb_dev *d)
{
    be_loop_del_timer(be_loop_of(d->be), d->delay_timer);
    d->delay_timer = 0;
    for (unsigned i = 0; i < d->nq; i++)
        d->q[i].ntdelay = d->q[i].nrdelay = 0;
}
