/* be_ring.c - mapping a frontend's ring pages and binding its event channel. */
#define _GNU_SOURCE
#include "be_internal.h"

#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

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
    void *p = xengnttab_map_domain_grant_refs(be->gt, nr_pages, be->fe_domid, refs,
                                              PROT_READ | PROT_WRITE);
    if (!p) {
        be_error(be, errno, "mapping ring %s/%s (%u pages) of domain %u: %s", dir, refkey, nr_pages,
                 be->fe_domid, strerror(errno));
        return -1;
    }
    r->sring = p;
    r->nr_pages = nr_pages;
    return 0;
}

int be_ring_bind(struct be_dev *be, const char *dir, const char *key, struct be_ring *r,
                 be_ring_cb *cb, void *opaque)
{
    unsigned slot;
    for (slot = 0; slot < BE_MAX_RINGS && be->rings[slot]; slot++)
        ;
    if (slot == BE_MAX_RINGS) {
        be_error(be, ENOSPC, "%s: more than %u event channels", dir, BE_MAX_RINGS);
        return -1;
    }
    uint64_t v;
    if (xsu_read_u64(be->xs, XBT_NULL, dir, key, UINT32_MAX, &v) < 0) {
        be_error(be, errno, "reading %s/%s: %s", dir, key, strerror(errno));
        return -1;
    }
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
    be->rings[slot] = r;
    return 0;
}

void be_ring_unmap(struct be_dev *be, struct be_ring *r)
{
    if (!r)
        return;
    if (r->bound) {
        for (unsigned i = 0; i < BE_MAX_RINGS; i++)
            if (be->rings[i] == r)
                be->rings[i] = NULL;
        if (xenevtchn_unbind(be->xce, r->port) < 0)
            BE_LOG(be, "unbinding event channel %u: %s", r->port, strerror(errno));
    }
    if (r->sring && xengnttab_unmap(be->gt, r->sring, r->nr_pages) < 0)
        BE_LOG(be, "unmapping ring (%u pages): %s", r->nr_pages, strerror(errno));
    memset(r, 0, sizeof(*r));
}

void be_ring_notify(struct be_dev *be, struct be_ring *r)
{
    if (r->bound && xenevtchn_notify(be->xce, r->port) < 0)
        BE_LOG_RL(be, "notifying event channel %u: %s", r->port, strerror(errno));
}

void be_ring_dispatch(struct be_dev *be, evtchn_port_t port)
{
    for (unsigned i = 0; i < BE_MAX_RINGS; i++) {
        struct be_ring *r = be->rings[i];
        if (r && r->port == port) {
            r->cb(be, r, r->opaque);
            return;
        }
    }
}
