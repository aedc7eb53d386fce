/* be_ring.c - a frontend's ring pages and event channel: mapping, binding,
 * the indexes of the shared page, and the publication of responses. This
 * file and common/xen_barriers.h hold every barrier a backend uses.
 */
#define _GNU_SOURCE
#include "be_internal.h"

#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* The header every ring.h shared page starts with, whatever its entries:
 * req_prod, req_event, rsp_prod, rsp_event. */
DEFINE_RING_TYPES(be_any, uint8_t, uint8_t);

static struct be_any_sring *page(const struct be_ring *r)
{
    return r->sring;
}

/* Note r in be->rings (once). 0, or -1 after be_error(). */
static int track(struct be_dev *be, const char *dir, struct be_ring *r)
{
    unsigned slot = BE_MAX_RINGS;
    for (unsigned i = 0; i < BE_MAX_RINGS; i++) {
        if (be->rings[i] == r)
            return 0;
        if (!be->rings[i] && slot == BE_MAX_RINGS)
            slot = i;
    }
    if (slot == BE_MAX_RINGS) {
        be_error(be, ENOSPC, "%s: more than %u rings", dir, BE_MAX_RINGS);
        return -1;
    }
    be->rings[slot] = r;
    return 0;
}

static void untrack(struct be_dev *be, struct be_ring *r)
{
    for (unsigned i = 0; i < BE_MAX_RINGS; i++)
        if (be->rings[i] == r)
            be->rings[i] = NULL;
}

int be_ring_map(struct be_dev *be, const char *dir, const char *refkey, unsigned nr_pages,
                bool indexed, struct be_ring *r)
{
    uint32_t refs[BE_RING_MAX_PAGES];
    if (nr_pages == 0 || nr_pages > BE_RING_MAX_PAGES || (!indexed && nr_pages != 1)) {
        be_error(be, EINVAL, "%s: ring of %u pages not supported", dir, nr_pages);
        return -1;
    }
    for (unsigned i = 0; i < nr_pages; i++) {
        char key[64];
        if (indexed)
            snprintf(key, sizeof(key), "%s%u", refkey, i);
        else
            snprintf(key, sizeof(key), "%s", refkey);
        uint64_t v;
        if (xsu_read_u64(be->xs, XBT_NULL, dir, key, UINT32_MAX, &v) < 0) {
            be_error(be, errno, "reading %s/%s: %s", dir, key, strerror(errno));
            return -1;
        }
        refs[i] = (uint32_t)v;
    }
    if (track(be, dir, r) < 0)
        return -1;
    void *p = xengnttab_map_domain_grant_refs(be->gt, nr_pages, be->fe_domid, refs,
                                              PROT_READ | PROT_WRITE);
    if (!p) {
        untrack(be, r);
        be_error(be, errno, "mapping ring %s/%s (%u pages) of domain %u: %s", dir, refkey, nr_pages,
                 be->fe_domid, strerror(errno));
        return -1;
    }
    r->sring = p;
    r->nr_pages = nr_pages;
    r->rsp_start = __atomic_load_n(&page(r)->rsp_prod, __ATOMIC_ACQUIRE);
    r->handed = r->rsp_start;
    return 0;
}

int be_ring_bind(struct be_dev *be, const char *dir, const char *key, struct be_ring *r,
                 be_ring_cb *cb, void *opaque)
{
    uint64_t v;
    if (xsu_read_u64(be->xs, XBT_NULL, dir, key, UINT32_MAX, &v) < 0) {
        be_error(be, errno, "reading %s/%s: %s", dir, key, strerror(errno));
        return -1;
    }
    if (track(be, dir, r) < 0)
        return -1;
    xenevtchn_port_or_error_t port = xenevtchn_bind_interdomain(be->xce, be->fe_domid, v);
    if (port < 0) {
        be_error(be, errno, "binding event channel %s/%s=%u of domain %u: %s", dir, key,
                 (unsigned)v, be->fe_domid, strerror(errno));
        return -1;
    }
    r->remote_port = (evtchn_port_t)v;
    r->port = (evtchn_port_t)port;
    r->bound = true;
    r->cb = cb;
    r->opaque = opaque;
    return 0;
}

void be_ring_unmap(struct be_dev *be, struct be_ring *r)
{
    if (!r)
        return;
    untrack(be, r); /* publications still held back are dropped with it */
    if (r->bound && xenevtchn_unbind(be->xce, r->port) < 0)
        BE_LOG(be, "unbinding event channel %u: %s", r->port, strerror(errno));
    if (r->sring && xengnttab_unmap(be->gt, r->sring, r->nr_pages) < 0)
        BE_LOG(be, "unmapping ring (%u pages): %s", r->nr_pages, strerror(errno));
    memset(r, 0, sizeof(*r));
}

void be_ring_notify(struct be_dev *be, struct be_ring *r)
{
    if (r->bound && xenevtchn_notify(be->xce, r->port) < 0)
        BE_LOG_RL(be, "notifying event channel %u: %s", r->port, strerror(errno));
}

void be_ring_notify_via(struct be_ring *r, struct be_ring *chan)
{
    r->chan = chan;
}

RING_IDX be_ring_req_prod(const struct be_ring *r)
{
    return __atomic_load_n(&page(r)->req_prod, __ATOMIC_ACQUIRE);
}

RING_IDX be_ring_req_event(struct be_ring *r, RING_IDX at)
{
    __atomic_store_n(&page(r)->req_event, at, __ATOMIC_RELAXED);
    mb(); /* the new req_event /before/ we look at req_prod again */
    return be_ring_req_prod(r);
}

RING_IDX be_ring_attach_at(const struct be_ring *r)
{
    return r->rsp_start;
}

void be_ring_publish(struct be_dev *be, struct be_ring *r, RING_IDX rsp_prod_pvt)
{
    be_fault_publish(be, r, rsp_prod_pvt); /* the fault layer, then be_ring_expose */
}

void be_ring_expose(struct be_dev *be, struct be_ring *r, RING_IDX upto)
{
    struct be_any_sring *s = page(r);
    RING_IDX old = __atomic_load_n(&s->rsp_prod, __ATOMIC_RELAXED);
    wmb(); /* the frontend sees the responses /before/ the producer index */
    __atomic_store_n(&s->rsp_prod, upto, __ATOMIC_RELAXED);
    mb(); /* ... and the new index /before/ we read its rsp_event */
    RING_IDX ev = __atomic_load_n(&s->rsp_event, __ATOMIC_RELAXED);
    /* As RING_PUSH_RESPONSES_AND_CHECK_NOTIFY: did we pass rsp_event? */
    if ((RING_IDX)(upto - ev) < (RING_IDX)(upto - old))
        be_ring_notify(be, r->chan ? r->chan : r);
}

void be_ring_dispatch(struct be_dev *be, evtchn_port_t port)
{
    if (be_fault_hung(be))
        return; /* the hang gate: the rings are kicked when the hang ends */
    for (unsigned i = 0; i < BE_MAX_RINGS; i++) {
        struct be_ring *r = be->rings[i];
        if (r && r->bound && r->port == port) {
            r->cb(be, r, r->opaque);
            return;
        }
    }
}

void be_ring_kick_all(struct be_dev *be)
{
    /* Re-read each slot: a callback may unmap rings. */
    for (unsigned i = 0; i < BE_MAX_RINGS; i++) {
        struct be_ring *r = be->rings[i];
        if (r && r->bound && r->cb)
            r->cb(be, r, r->opaque);
    }
}
