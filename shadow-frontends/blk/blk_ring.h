/* blk_ring.h - the blkif shared ring of one connection: 2^order pages
 * granted to the backend, an unbound event channel bound to it, requests
 * produced from private copies, responses consumed into private copies
 * after the producer index was range-checked. */
#ifndef BLK_RING_H
#define BLK_RING_H

#include "blk_xen.h"

#include <stdbool.h>
#include <stdint.h>
#include <xenevtchn.h>
#include <xengnttab.h>

#define BLK_MAX_RING_ORDER 4u /* 16 pages, 512 requests */

struct blk_ring {
    xengntshr_handle *gs;
    xenevtchn_handle *xce;
    void *mem;
    unsigned order;
    uint32_t refs[1u << BLK_MAX_RING_ORDER];
    blkif_front_ring_t fr;
    evtchn_port_t port;
    bool bound;
    /* Since setup, for the log (a hot standby's ring must stay at 0 until
     * it is promoted): requests published, notifications sent. */
    uint64_t published, notified;
    RING_IDX pushed_to; /* req_prod_pvt at the last push (ours, not the shared copy) */
};

/* Share the ring with domid and bind a port for it. 0 or -1 (errno); on
 * failure nothing stays shared or bound. */
int blk_ring_setup(struct blk_ring *r, xengntshr_handle *gs, xenevtchn_handle *xce, uint32_t domid,
                   unsigned order);
/* Unbind and unshare (NULL-safe, safe when not set up). */
void blk_ring_teardown(struct blk_ring *r);

static inline unsigned blk_ring_size(const struct blk_ring *r)
{
    return RING_SIZE(&r->fr);
}

/* Copy req into the next request slot; false if the ring is full. */
bool blk_ring_put(struct blk_ring *r, const void *req, size_t len);
/* Publish produced requests; notify the backend if it asked. */
void blk_ring_push(struct blk_ring *r);

/* Response consumption: blk_ring_avail range-checks the backend's producer
 * index and returns how many responses may be taken, or -1 when the index
 * is impossible (*prod set for the report). */
int blk_ring_avail(struct blk_ring *r, uint32_t *prod);
/* Copy out the next response and advance the consumer index. */
void blk_ring_take(struct blk_ring *r, blkif_response_t *out);
/* Ask for an event on the next response; true if responses arrived meanwhile. */
bool blk_ring_final_check(struct blk_ring *r);
/* Acknowledge a pending event on the port (when its fd was readable). */
void blk_ring_ack_event(struct blk_ring *r);

/* The shared indexes the backend writes, as they are now (copies, for the
 * log: its responses produced, and req_event, one past the requests it had
 * consumed when it last waited). */
void blk_ring_backend_marks(const struct blk_ring *r, uint32_t *rsp_prod, uint32_t *req_event);

#endif
