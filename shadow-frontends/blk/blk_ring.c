/* blk_ring.c - the shared ring and its event channel. */
#define _GNU_SOURCE
#include "blk_ring.h"

#include "sf_validate.h"

#include <errno.h>
#include <string.h>

int blk_ring_setup(struct blk_ring *r, xengntshr_handle *gs, xenevtchn_handle *xce, uint32_t domid,
                   unsigned order)
{
    memset(r, 0, sizeof(*r));
    if (order > BLK_MAX_RING_ORDER) {
        errno = EINVAL;
        return -1;
    }
    r->gs = gs;
    r->xce = xce;
    r->order = order;
    unsigned n = 1u << order;
    r->mem = xengntshr_share_pages(gs, domid, (int)n, r->refs, 1);
    if (!r->mem)
        return -1;
    blkif_sring_t *s = r->mem;
    memset(s, 0, (size_t)n * BLK_PAGE_SIZE);
    SHARED_RING_INIT(s);
    FRONT_RING_INIT(&r->fr, s, (size_t)n * BLK_PAGE_SIZE);
    xenevtchn_port_or_error_t port = xenevtchn_bind_unbound_port(xce, domid);
    if (port < 0) {
        int e = errno;
        xengntshr_unshare(gs, r->mem, n);
        r->mem = NULL;
        errno = e;
        return -1;
    }
    r->port = (evtchn_port_t)port;
    r->bound = true;
    return 0;
}

void blk_ring_teardown(struct blk_ring *r)
{
    if (!r)
        return;
    if (r->bound)
        xenevtchn_unbind(r->xce, r->port);
    if (r->mem)
        xengntshr_unshare(r->gs, r->mem, 1u << r->order);
    r->bound = false;
    r->mem = NULL;
}

bool blk_ring_put(struct blk_ring *r, const void *req, size_t len)
{
    if (RING_FULL(&r->fr) || len > sizeof(blkif_request_t))
        return false;
    memcpy(RING_GET_REQUEST(&r->fr, r->fr.req_prod_pvt), req, len);
    r->fr.req_prod_pvt++;
    return true;
}

void blk_ring_push(struct blk_ring *r)
{
    int notify;
    r->published += (RING_IDX)(r->fr.req_prod_pvt - r->pushed_to);
    r->pushed_to = r->fr.req_prod_pvt;
    /* requests /then/ producer index /then/ read req_event (in the macro) */
    RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&r->fr, notify);
    if (notify) {
        xenevtchn_notify(r->xce, r->port);
        r->notified++;
    }
}

int blk_ring_avail(struct blk_ring *r, uint32_t *prod)
{
    uint32_t p = __atomic_load_n(&r->fr.sring->rsp_prod, __ATOMIC_ACQUIRE);
    *prod = p;
    if (!sfv_ring_prod_ok(p, r->fr.rsp_cons, r->fr.req_prod_pvt, RING_SIZE(&r->fr)))
        return -1;
    return (int)(p - r->fr.rsp_cons);
}

void blk_ring_take(struct blk_ring *r, blkif_response_t *out)
{
    /* producer index (acquire in blk_ring_avail) /then/ the response */
    RING_COPY_RESPONSE(&r->fr, r->fr.rsp_cons, out);
    r->fr.rsp_cons++;
}

bool blk_ring_final_check(struct blk_ring *r)
{
    int more;
    RING_FINAL_CHECK_FOR_RESPONSES(&r->fr, more);
    return more != 0;
}

void blk_ring_ack_event(struct blk_ring *r)
{
    xenevtchn_port_or_error_t p = xenevtchn_pending(r->xce);
    if (p >= 0)
        xenevtchn_unmask(r->xce, (evtchn_port_t)p);
}

void blk_ring_backend_marks(const struct blk_ring *r, uint32_t *rsp_prod, uint32_t *req_event)
{
    *rsp_prod = __atomic_load_n(&r->fr.sring->rsp_prod, __ATOMIC_ACQUIRE);
    *req_event = __atomic_load_n(&r->fr.sring->req_event, __ATOMIC_ACQUIRE);
}
