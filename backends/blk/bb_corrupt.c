/* bb_corrupt.c - blkback's corrupt hook for the core's fault layer
 * ("corrupt N"): how one blkif response is made invalid, in its ring slot
 * before it is published.
 */
#define _GNU_SOURCE
#include "bb.h"

#include <inttypes.h>
#include <stddef.h>

/* An int16 status no backend can send (blkif.h defines -2..0). */
#define BB_IMPOSSIBLE_STATUS 0x7fff

bool bb_corrupt(struct be_dev *be, struct be_ring *r, RING_IDX idx, enum be_corrupt how)
{
    /* Every ring blkback maps is a queue's. */
    struct bb_queue *q = (struct bb_queue *)((char *)r - offsetof(struct bb_queue, ring));
    blkif_response_t *rsp = RING_GET_RESPONSE(&q->br, idx);
    if (how == BE_CORRUPT_ID)
        rsp->id = ~rsp->id;
    else
        rsp->status = BB_IMPOSSIBLE_STATUS;
    BE_LOG(be, "fault: corrupted response (id %#" PRIx64 " status %d)", rsp->id, rsp->status);
    return true;
}
