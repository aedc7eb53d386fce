/* nb_run.c - what runs when: both directions of all queues, deferred
 * work, and the end of a queue that broke the protocol. */
#define _GNU_SOURCE
#include "nb.h"

#include <errno.h>
#include <string.h>
#include <time.h>

uint64_t nb_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void nb_run_all(struct nb_dev *d)
{
    for (unsigned i = 0; i < d->nq; i++) {
        nb_tx_run(&d->q[i]);
        nb_rx_run(&d->q[i]);
    }
}

static void kicked(void *opaque)
{
    struct nb_queue *q = opaque;
    q->kick_timer = 0;
    nb_tx_run(q);
    nb_rx_run(q);
}

void nb_kick(struct nb_queue *q)
{
    if (!q->kick_timer)
        q->kick_timer = be_loop_add_timer(be_loop_of(q->d->be), 0, kicked, q);
}

void nb_unkick(struct nb_queue *q)
{
    be_loop_del_timer(be_loop_of(q->d->be), q->kick_timer);
    q->kick_timer = 0;
}

void nb_queue_broken(struct nb_queue *q, const char *what, RING_IDX prod, RING_IDX ours)
{
    if (q->broken)
        return;
    q->broken = true;
    nb_queue_watch(q, false);
    be_fail(q->d->be, EPROTO,
            "queue %u: frontend's %s req_prod %u is %u requests past our responses on a ring "
            "of %u: not serving this queue",
            q->idx, what, prod, prod - ours, (unsigned)NB_RING_SIZE);
}

bool nb_tap_gone_errno(int err)
{
    /* A tun file whose device was deleted: EBADFD. (EIO, a TAP set down by
     * the operator, is not: its frames are dropped until it is up again.) */
    return err == EBADFD || err == ENXIO || err == ENODEV;
}

void nb_tap_lost(struct nb_dev *d, const char *op, int err)
{
    bool was = false;
    for (unsigned i = 0; i < d->nq; i++) {
        was |= d->q[i].broken;
        d->q[i].broken = true;
        nb_queue_watch(&d->q[i], false);
    }
    if (!was)
        be_fail(d->be, err,
                "TAP %s: %s: %s: not serving this device (the next connection makes "
                "a new TAP)",
                d->tap.name, op, strerror(err));
}
