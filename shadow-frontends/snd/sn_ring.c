/* sn_ring.c - one stream's sndif transport (see sn_ring.h). */
#define _GNU_SOURCE
#include "sn_ring.h"

#include "sf_validate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Responses and events consumed per call: the loop stays responsive. */
#define HARVEST_MAX (4u * SN_RING_SIZE)

int sn_ring_setup(struct sn_ring *r, xengntshr_handle *gs, xenevtchn_handle *xce, uint32_t domid)
{
    memset(r, 0, sizeof(*r));
    r->gs = gs;
    r->xce = xce;
    r->domid = domid;
    r->sring = xengntshr_share_pages(gs, domid, 1, &r->ring_ref, 1);
    if (!r->sring)
        goto fail;
    r->evt = xengntshr_share_pages(gs, domid, 1, &r->evt_ref, 1);
    if (!r->evt)
        goto fail;
    memset(r->sring, 0, SN_PAGE);
    memset(r->evt, 0, SN_PAGE);
    xen_sndif_sring_t *s = r->sring;
    SHARED_RING_INIT(s);
    FRONT_RING_INIT(&r->fr, s, SN_PAGE);
    xenevtchn_port_or_error_t p = xenevtchn_bind_unbound_port(xce, domid);
    if (p < 0)
        goto fail;
    r->port = (evtchn_port_t)p;
    r->bound = true;
    p = xenevtchn_bind_unbound_port(xce, domid);
    if (p < 0)
        goto fail;
    r->evt_port = (evtchn_port_t)p;
    r->evt_bound = true;
    return 0;
fail:;
    int e = errno;
    sn_ring_teardown(r);
    errno = e;
    return -1;
}

static void free_buffer(struct sn_ring *r)
{
    if (r->dir)
        xengntshr_unshare(r->gs, r->dir, r->dir_pages);
    if (r->buf)
        xengntshr_unshare(r->gs, r->buf, r->buf_pages);
    free(r->buf_refs);
    r->dir = NULL;
    r->buf = NULL;
    r->buf_refs = NULL;
    r->dir_pages = r->buf_pages = 0;
    r->buf_sz = 0;
}

void sn_ring_teardown(struct sn_ring *r)
{
    if (!r)
        return;
    if (r->bound)
        xenevtchn_unbind(r->xce, r->port);
    if (r->evt_bound)
        xenevtchn_unbind(r->xce, r->evt_port);
    free_buffer(r);
    if (r->evt)
        xengntshr_unshare(r->gs, r->evt, 1);
    if (r->sring)
        xengntshr_unshare(r->gs, r->sring, 1);
    memset(r, 0, sizeof(*r));
}

int sn_ring_buffer(struct sn_ring *r, uint32_t buf_sz, uint32_t *dir_ref)
{
    free_buffer(r);
    unsigned n = (buf_sz + SN_PAGE - 1) / SN_PAGE;
    if (n == 0 || n > SN_MAX_BUF_PAGES) {
        errno = EINVAL;
        return -1;
    }
    unsigned nd = (n + SN_DIR_REFS - 1) / SN_DIR_REFS;
    r->buf_refs = calloc(n, sizeof(uint32_t));
    if (!r->buf_refs)
        return -1;
    /* The backend writes capture data and volume values into it. */
    r->buf = xengntshr_share_pages(r->gs, r->domid, (int)n, r->buf_refs, 1);
    if (!r->buf)
        goto fail;
    r->buf_pages = n;
    /* The directory is only read. */
    r->dir = xengntshr_share_pages(r->gs, r->domid, (int)nd, r->dir_refs, 0);
    if (!r->dir)
        goto fail;
    r->dir_pages = nd;
    memset(r->buf, 0, (size_t)n * SN_PAGE);
    for (unsigned k = 0; k < nd; k++) {
        struct xensnd_page_directory *pg = (void *)((uint8_t *)r->dir + (size_t)k * SN_PAGE);
        pg->gref_dir_next_page = k + 1 < nd ? r->dir_refs[k + 1] : 0;
        unsigned first = k * SN_DIR_REFS, cnt = n - first < SN_DIR_REFS ? n - first : SN_DIR_REFS;
        memcpy(pg->gref, &r->buf_refs[first], cnt * sizeof(uint32_t));
    }
    r->buf_sz = buf_sz;
    *dir_ref = r->dir_refs[0];
    return 0;
fail:;
    int e = errno;
    free_buffer(r);
    errno = e;
    return -1;
}

bool sn_ring_room(const struct sn_ring *r)
{
    return r->sring && r->nbusy < SN_RING_SIZE && !RING_FULL(&r->fr);
}

/* Leave quiet: the next response the backend produces notifies. rsp_event
 * is set past what it has produced already (answers not yet taken lie
 * between rsp_cons and rsp_prod), checked again after the store in case it
 * produced one meanwhile. */
static void notify_next(struct sn_ring *r)
{
    for (unsigned k = 0; k < 16; k++) {
        RING_IDX p = __atomic_load_n(&r->fr.sring->rsp_prod, __ATOMIC_ACQUIRE);
        __atomic_store_n(&r->fr.sring->rsp_event, p + 1, __ATOMIC_RELEASE);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&r->fr.sring->rsp_prod, __ATOMIC_ACQUIRE) == p)
            break;
    }
    r->quiet = false;
}

void sn_ring_quiet(struct sn_ring *r, bool on)
{
    r->quiet_wanted = on;
}

int sn_ring_issue(struct sn_ring *r, struct xensnd_req *req, uint64_t tag, uint64_t now)
{
    if (!sn_ring_room(r)) {
        errno = EBUSY;
        return -1;
    }
    unsigned id = 0;
    while (r->req[id].busy)
        id++;
    r->req[id] = (struct sn_req){.busy = true, .op = req->operation, .since = now, .tag = tag};
    r->nbusy++;
    if (req->operation != XENSND_OP_WRITE) {
        r->nbusy_other++;
        if (r->quiet)
            notify_next(r);
    }
    req->id = (uint16_t)id;
    *RING_GET_REQUEST(&r->fr, r->fr.req_prod_pvt) = *req;
    r->fr.req_prod_pvt++;
    r->push = true;
    return (int)id;
}

void sn_ring_push(struct sn_ring *r)
{
    if (!r->push || !r->sring)
        return;
    r->push = false;
    int notify;
    /* the requests /then/ the producer index (in the macro) */
    RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(&r->fr, notify);
    if (notify)
        xenevtchn_notify(r->xce, r->port);
}

/* sndif.h: a status is 0 or a negative XEN_E* value. */
static bool status_ok(int32_t st)
{
    return st <= 0 && st > -4096;
}

int sn_ring_harvest(struct sn_ring *r, sn_rsp_fn *fn, void *arg, char *why, size_t len)
{
    if (!r->sring)
        return 0;
    int any = 0;
    for (unsigned n = 0; n < HARVEST_MAX;) {
        RING_IDX rp = __atomic_load_n(&r->fr.sring->rsp_prod, __ATOMIC_ACQUIRE);
        if (!sfv_ring_prod_ok(rp, r->fr.rsp_cons, r->fr.req_prod_pvt, SN_RING_SIZE)) {
            snprintf(why, len, "rsp_prod %u with %u requests outstanding from %u", rp,
                     r->fr.req_prod_pvt - r->fr.rsp_cons, r->fr.rsp_cons);
            return -1;
        }
        while (r->fr.rsp_cons != rp && n < HARVEST_MAX) {
            struct xensnd_resp rsp;
            RING_COPY_RESPONSE(&r->fr, r->fr.rsp_cons, &rsp);
            struct sn_req *q = rsp.id < SN_RING_SIZE ? &r->req[rsp.id] : NULL;
            if (!q || !q->busy) {
                snprintf(why, len, "a response with id %u, which no request outstanding has",
                         rsp.id);
                return -1;
            }
            if (rsp.operation != q->op) {
                snprintf(why, len, "the response to request %u has operation %u, not %u", rsp.id,
                         rsp.operation, q->op);
                return -1;
            }
            if (!status_ok(rsp.status)) {
                snprintf(why, len, "the response to request %u (operation %u) has status %d",
                         rsp.id, rsp.operation, rsp.status);
                return -1;
            }
            r->fr.rsp_cons++;
            n++;
            uint64_t tag = q->tag;
            q->busy = false;
            r->nbusy--;
            if (q->op != XENSND_OP_WRITE)
                r->nbusy_other--;
            any = 1;
            fn(arg, tag, &rsp);
        }
        if (r->quiet_wanted && !r->nbusy_other) {
            /* Out of reach: at most SN_RING_SIZE requests are outstanding. */
            __atomic_store_n(&r->fr.sring->rsp_event, r->fr.rsp_cons + SN_RING_SIZE,
                             __ATOMIC_RELEASE);
            r->quiet = true;
            break;
        }
        r->quiet = false;
        int more;
        RING_FINAL_CHECK_FOR_RESPONSES(&r->fr, more);
        if (!more)
            break;
    }
    return any;
}

int sn_ring_events(struct sn_ring *r, sn_evt_fn *fn, void *arg, char *why, size_t len)
{
    if (!r->evt)
        return 0;
    int any = 0;
    uint32_t prod = __atomic_load_n(&r->evt->in_prod, __ATOMIC_ACQUIRE);
    uint32_t cons = r->evt_cons; /* our copy: the backend can write the page */
    if (prod - cons > XENSND_IN_RING_LEN) {
        snprintf(why, len, "event page in_prod %u is %u past in_cons %u (it holds %zu)", prod,
                 prod - cons, cons, (size_t)XENSND_IN_RING_LEN);
        return -1;
    }
    for (unsigned n = 0; cons != prod && n < HARVEST_MAX; n++) {
        struct xensnd_evt e;
        memcpy(&e, &XENSND_IN_RING_REF(r->evt, cons), sizeof(e));
        cons++;
        if (e.type != XENSND_EVT_CUR_POS) {
            snprintf(why, len, "event %u of unknown type %u", e.id, e.type);
            return -1;
        }
        if (e.id != r->evt_expect) {
            snprintf(why, len, "event id %u where %u was next", e.id, r->evt_expect);
            return -1;
        }
        r->evt_expect++;
        any = 1;
        fn(arg, e.op.cur_pos.position);
    }
    r->evt_cons = cons;
    /* the events are copied /then/ the backend may write over them */
    __atomic_store_n(&r->evt->in_cons, cons, __ATOMIC_RELEASE);
    return any;
}

void sn_ring_events_reset(struct sn_ring *r)
{
    if (!r->evt)
        return;
    uint32_t prod = __atomic_load_n(&r->evt->in_prod, __ATOMIC_ACQUIRE);
    r->evt_cons = prod;
    __atomic_store_n(&r->evt->in_cons, prod, __ATOMIC_RELEASE);
    r->evt_expect = 0;
}

void sn_ring_ack(xenevtchn_handle *xce)
{
    /* One port per readable fd: xenevtchn_pending reads the device, which
     * blocks when nothing more is pending. poll says again if more is. */
    xenevtchn_port_or_error_t p = xenevtchn_pending(xce);
    if (p >= 0)
        xenevtchn_unmask(xce, (evtchn_port_t)p);
}

bool sn_ring_oldest(const struct sn_ring *r, uint64_t *since)
{
    bool any = false;
    for (unsigned i = 0; i < SN_RING_SIZE; i++)
        if (r->req[i].busy && (!any || r->req[i].since < *since)) {
            *since = r->req[i].since;
            any = true;
        }
    return any;
}
