/* blk_xenbus.h - the blkif protocol keys (xen/io/blkif.h): what the
 * backend advertises, checked, and the transport keys the frontend writes.
 * Sector counts in the protocol are in 512-byte units; sector-size is the
 * logical block size (we never write feature-large-sector-size). */
#ifndef BLK_XENBUS_H
#define BLK_XENBUS_H

#include "sf_xenbus.h"

#include <stdbool.h>
#include <stdint.h>

struct blk_features {
    /* transport, read at InitWait */
    unsigned max_ring_order;
    unsigned max_queues;
    /* device, read at Connected */
    uint64_t sectors; /* 512-byte units */
    uint32_t sector_size;
    uint32_t info; /* VDISK_* */
    bool flush, barrier, discard, persistent;
    uint32_t max_indirect; /* 0: no indirect requests */
    uint32_t discard_granularity, discard_alignment;
};

/* At InitWait: max-ring-page-order (or legacy max-ring-pages),
 * multi-queue-max-queues. 0 or -1 (errno, with *why naming the key). */
int blk_read_transport(struct sfx *x, struct blk_features *f, const char **why);
/* At Connected: sectors, sector-size, info and the feature keys, checked. */
int blk_read_device(struct sfx *x, struct blk_features *f, const char **why);

/* Write ring-ref (or ring-page-order + ring-ref<N> + num-ring-pages),
 * event-channel, protocol, feature-persistent in one transaction. */
int blk_write_transport(struct sfx *x, const uint32_t *refs, unsigned order, unsigned port);
/* Remove what blk_write_transport wrote with that ring order (best effort),
 * or with order < 0 whatever any order could have written. */
void blk_remove_transport(struct sfx *x, int order);

#endif
