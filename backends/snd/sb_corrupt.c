/* sb_corrupt.c - sndback's corrupt hook for the core's fault layer
 * ("corrupt N"): how one sndif response is made invalid, in its ring slot
 * before it is published.
 */
#define _GNU_SOURCE
#include "sb.h"

#include <stddef.h>

/* A status no backend sends (statuses are 0 or a small -XEN_E*). */
#define SB_IMPOSSIBLE_STATUS 0x7fff

bool sb_corrupt(struct be_dev *be, struct be_ring *r, RING_IDX idx, enum be_corrupt how)
{
    /* Responses are published only on a stream's request ring. */
    struct sb_stream *s = (struct sb_stream *)((char *)r - offsetof(struct sb_stream, ring));
    struct xensnd_resp *rsp = RING_GET_RESPONSE(&s->br, idx);
    if (how == BE_CORRUPT_ID)
        rsp->id = (uint16_t)~rsp->id;
    else
        rsp->status = SB_IMPOSSIBLE_STATUS;
    BE_LOG(be, "fault: corrupted response (id %#x status %d)", rsp->id, rsp->status);
    return true;
}
