/* sb_evt.c - the stream's event page: XENSND_EVT_CUR_POS events, numbered
 * 0, 1, 2, ... from each OPEN (Linux's frontend restarts its count when it
 * opens a stream and drops events out of that order).
 * The page is the frontend's: its in_cons is read once and range-checked;
 * an event that does not fit is dropped and its number not used.
 */
#define _GNU_SOURCE
#include "sb.h"

#include <string.h>

void sb_evt_position(struct sb_stream *s, uint64_t pos)
{
    struct xensnd_event_page *pg = s->evt.sring;
    if (!pg || s->d->version < 2)
        return;
    uint32_t cons = __atomic_load_n(&pg->in_cons, __ATOMIC_ACQUIRE);
    uint32_t prod = pg->in_prod; /* ours: the frontend only reads it */
    if (prod - cons >= XENSND_IN_RING_LEN) {
        BE_LOG_RL(s->d->be,
                  "stream %u/%u: event page full (prod %u cons %u): position %llu "
                  "not sent",
                  s->pcm_idx, s->idx, prod, cons, (unsigned long long)pos);
        return;
    }
    struct xensnd_evt e;
    memset(&e, 0, sizeof(e));
    e.id = s->evt_id++;
    e.type = XENSND_EVT_CUR_POS;
    e.op.cur_pos.position = pos;
    XENSND_IN_RING_REF(pg, prod) = e;
    /* The event is written before the frontend can see the new index:
     * release ordering is the barrier (the event page is not a ring.h ring,
     * so be_ring_publish does not apply). */
    __atomic_store_n(&pg->in_prod, prod + 1, __ATOMIC_RELEASE);
    be_ring_notify(s->d->be, &s->evt);
}
