/* sb_ring.c - one stream's request ring: taking requests off it (each
 * copied out before it is looked at, the producer index range-checked
 * first) and writing their responses; the core publishes them
 * (be_ring_publish, where the fault layer sits). Every request is answered
 * at once: nothing in sndif waits.
 */
#define _GNU_SOURCE
#include "sb.h"

#include <errno.h>
#include <string.h>

static bool stopped(struct sb_stream *s)
{
    return !s->attached || s->broken || be_fault_hung(s->d->be);
}

void sb_ring_event(struct be_dev *be, struct be_ring *r, void *opaque)
{
    (void)r;
    struct sb_stream *s = opaque;
    while (!stopped(s)) {
        RING_IDX rp = be_ring_req_prod(&s->ring);
        if (!be_ring_prod_ok(rp, s->br.req_cons, s->br.rsp_prod_pvt, RING_SIZE(&s->br))) {
            s->broken = true;
            be_fail(be, EPROTO,
                    "stream %u/%u: frontend's req_prod %u is %u requests past our responses "
                    "on a ring of %u: not serving this ring",
                    s->pcm_idx, s->idx, rp, rp - s->br.rsp_prod_pvt, RING_SIZE(&s->br));
            break;
        }
        while (s->br.req_cons != rp && !stopped(s) &&
               !RING_REQUEST_CONS_OVERFLOW(&s->br, s->br.req_cons)) {
            struct xensnd_req req;
            RING_COPY_REQUEST(&s->br, s->br.req_cons, &req);
            s->br.req_cons++;
            sb_dispatch(s, &req);
        }
        sb_push(s);
        if (stopped(s))
            break;
        int more;
        RING_FINAL_CHECK_FOR_REQUESTS(&s->br, more);
        if (!more)
            break;
    }
    /* Also the way back from a hang (the core runs every ring's callback):
     * the PCM is served again. */
    sb_pcm_kick(s);
}

void sb_respond(struct sb_stream *s, const struct xensnd_req *req, int status,
                const struct xensnd_query_hw_param *hw)
{
    if (!s->attached || s->broken)
        return;
    struct xensnd_resp rsp;
    memset(&rsp, 0, sizeof(rsp));
    rsp.id = req->id;
    rsp.operation = req->operation;
    rsp.status = status;
    if (hw)
        rsp.resp.hw_param = *hw;
    *RING_GET_RESPONSE(&s->br, s->br.rsp_prod_pvt) = rsp;
    s->br.rsp_prod_pvt++;
    s->push = true;
}

void sb_push(struct sb_stream *s)
{
    if (!s->push)
        return;
    s->push = false;
    be_ring_publish(s->d->be, &s->ring, s->br.rsp_prod_pvt);
}
