/* blk_transport.h - one blkif connection's transport: the shared ring and
 * its event channel, the pool of data pages granted to the backend's domain,
 * what that backend offers, and the per-slot bookkeeping of requests on the
 * ring. The class holds two: the live one and a hot standby's, which is set
 * up and connected like the live one but never carries a request until it
 * is promoted (schema.md, "The hot standby's connection"). A transport
 * moves by value: nothing in it points into itself. */
#ifndef BLK_TRANSPORT_H
#define BLK_TRANSPORT_H

#include "blk_pool.h"
#include "blk_ring.h"
#include "blk_xenbus.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xenevtchn.h>
#include <xengnttab.h>

/* What one ring slot carries while its request is outstanding. */
struct blk_slot {
    uint8_t wire_op;  /* operation on the ring */
    uint8_t inner_op; /* BLKIF_OP_INDIRECT: the read or write inside */
    uint16_t npages;
    uint16_t nind;
    uint32_t *pages; /* data pages (pool numbers), segs_max of them */
    uint32_t ind[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
};

struct blk_limits {
    unsigned max_ring_order; /* at most this ring order, whatever the backend offers */
    unsigned max_grants;     /* grant budget of one transport: ring + indirect + data pages */
    unsigned max_indirect;   /* segments per indirect request, at most */
};

struct blk_transport {
    /* Its own event channel handle, so that the engine polls the live
     * transport's fd only: a standby's backend that notifies wakes nobody. */
    xenevtchn_handle *xce;
    struct blk_ring ring;
    struct blk_pool pool;
    bool ring_up, pool_up, published;
    struct blk_features f; /* transport keys at setup, device keys at connect */
    unsigned segs_max;
    bool indirect;
    struct blk_slot *slots; /* one per ring slot, from connect */
    unsigned nslots;
};

/* Open the event channel handle. 0 or -1 (errno). */
int blk_transport_open(struct blk_transport *t);
/* Tear down and close (NULL-safe, safe on a zeroed transport). */
void blk_transport_close(struct blk_transport *t);

/* The backend in x is in InitWait: read what it offers, share a ring and a
 * pool with its domain (prefill: pages shared ahead of need), bind a port,
 * write the transport keys into x's dir. 0, or -1 with why filled; what was
 * set up stays for blk_transport_teardown. */
int blk_transport_setup(struct blk_transport *t, xengntshr_handle *gs, const struct blk_limits *lim,
                        struct sfx *x, unsigned prefill, char *why, size_t len);
/* The backend is Connected: read and check what it offers (into t->f), and
 * plan requests for it (segments, slots). 0, or -1 with why filled. */
int blk_transport_connect(struct blk_transport *t, const struct blk_limits *lim, struct sfx *x,
                          char *why, size_t len);
/* Unbind, unshare every page (never written again), free the slots, remove
 * the transport keys from x's dir if they were written (x may be NULL).
 * Safe when down. */
void blk_transport_teardown(struct blk_transport *t, struct sfx *x);
/* As teardown, but the data pool goes to *retired (finished first if it
 * still held one) for blk_pool_release_step, never used again: unsharing a
 * pool takes tens of ms (a xensim round trip per chunk) that a recovery need
 * not wait for. */
void blk_transport_retire(struct blk_transport *t, struct sfx *x, struct blk_pool *retired);

#endif
