/* bb_connect.c - a connection: the frontend's transport keys (protocol,
 * queues, ring-page-order, feature-persistent), its rings, the I/O engine;
 * and the disconnect that undoes all of it.
 */
#define _GNU_SOURCE
#include "bb.h"

#include "bb_io.h"
#include "pv-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xen/io/protocols.h>

static const char *cache_name(enum bb_cache c)
{
    return c == BB_CACHE_NONE ? "none" : c == BB_CACHE_WRITEBACK ? "writeback" : "volatile";
}

static int read_protocol(struct be_dev *be)
{
    char *proto = xsu_read(be_xs(be), XBT_NULL, be_fe_path(be), PVK_PROTOCOL, 64);
    if (!proto && errno == ENOENT)
        return 0;
    if (!proto) {
        be_error(be, errno, "reading %s/protocol: %s", be_fe_path(be), strerror(errno));
        return -1;
    }
    int ok = !strcmp(proto, XEN_IO_PROTO_ABI_NATIVE);
    if (!ok)
        be_error(be, EPROTONOSUPPORT, "frontend protocol '%s' not supported (only %s)", proto,
                 XEN_IO_PROTO_ABI_NATIVE);
    free(proto);
    return ok ? 0 : -1;
}

static int attach_queue(struct bb_dev *d, struct bb_queue *q, const char *dir, unsigned order,
                        bool indexed)
{
    struct be_dev *be = d->be;
    if (be_ring_map(be, dir, PVK_RING_REF, 1u << order, indexed, &q->ring) < 0)
        return -1;
    blkif_sring_t *s = q->ring.sring;
    RING_IDX rsp = be_ring_attach_at(&q->ring);
    BACK_RING_ATTACH(&q->br, s, rsp, (size_t)BB_PAGE_SIZE << order);
    RING_IDX req = be_ring_req_prod(&q->ring);
    if (RING_REQUEST_PROD_OVERFLOW(&q->br, req)) {
        be_error(be, EPROTO, "%s: ring indexes req_prod %u rsp_prod %u impossible on a ring of %u",
                 dir, req, rsp, RING_SIZE(&q->br));
        return -1;
    }
    unsigned n = RING_SIZE(&q->br);
    q->reqs = calloc(n, sizeof(*q->reqs));
    q->pass = calloc(n, sizeof(*q->pass));
    if (!q->reqs || !q->pass) {
        be_error(be, ENOMEM, "out of memory for %u requests", n);
        return -1;
    }
    for (unsigned i = n; i-- > 0;) {
        q->reqs[i].q = q;
        q->reqs[i].next = q->free;
        q->free = &q->reqs[i];
    }
    if (d->persistent) {
        q->pgc = bb_pgcache_new(BB_MAX_PGRANTS, bb_pg_map, bb_pg_unmap, q);
        if (!q->pgc) {
            be_error(be, ENOMEM, "out of memory for the persistent grant cache");
            return -1;
        }
    }
    q->attached = true;
    return be_ring_bind(be, dir, PVK_EVENT_CHANNEL, &q->ring, bb_ring_event, q);
}

static int start_io(struct bb_dev *d, unsigned depth)
{
    bool want_sync = d->vc || !strcmp(d->io_choice, "sync");
    if (!want_sync) {
        d->io = bb_io_uring_new(d, depth);
        if (d->io)
            return 0;
        if (!strcmp(d->io_choice, "uring")) {
            be_error(d->be, errno, "io_uring unavailable: %s", strerror(errno));
            return -1;
        }
        BE_LOG(d->be, "io_uring unavailable (%s): using preadv/pwritev", strerror(errno));
    }
    d->io = bb_io_sync_new(d);
    if (!d->io) {
        be_error(d->be, ENOMEM, "out of memory for the I/O engine");
        return -1;
    }
    return 0;
}

int bb_connect(struct be_dev *be)
{
    struct bb_dev *d = be_priv(be);
    uint64_t nq, order, pers;
    /* ring-page-order absent reads as UINT64_MAX (past its maximum, so no
     * value can): order 0 with one ring-ref. Present, even 0, the refs are
     * ring-ref0..N-1 (blkif.h note 6). */
    if (read_protocol(be) < 0 || be_read_fe_u64(be, PVK_MQ_NUM_QUEUES, BB_MAX_QUEUES, 1, &nq) < 0 ||
        be_read_fe_u64(be, PVK_BLK_RING_PAGE_ORDER, BB_MAX_RING_ORDER, UINT64_MAX, &order) < 0 ||
        be_read_fe_u64(be, PVK_BLK_FEATURE_PERSISTENT, 1, 0, &pers) < 0)
        return -1;
    if (nq == 0) {
        be_error(be, EINVAL, "frontend %s/multi-queue-num-queues is 0", be_fe_path(be));
        return -1;
    }
    bool indexed = order != UINT64_MAX;
    if (!indexed)
        order = 0;
    d->persistent = pers;
    d->q = calloc(nq, sizeof(*d->q));
    if (!d->q) {
        be_error(be, ENOMEM, "out of memory for %u queues", (unsigned)nq);
        return -1;
    }
    d->nqueues = (unsigned)nq;
    d->done_tail = &d->done_head;
    unsigned depth = 0;
    for (unsigned i = 0; i < d->nqueues; i++) {
        char dir[300];
        if (nq == 1)
            snprintf(dir, sizeof(dir), "%s", be_fe_path(be));
        else
            snprintf(dir, sizeof(dir), "%s/" PVK_QUEUE_FMT, be_fe_path(be), i);
        d->q[i].d = d;
        d->q[i].idx = i;
        if (attach_queue(d, &d->q[i], dir, (unsigned)order, indexed) < 0)
            return -1;
        depth += RING_SIZE(&d->q[i].br);
    }
    if (start_io(d, depth) < 0)
        return -1;
    BE_LOG(be, "connected to %s: %u queue(s) of %u page(s), persistent grants %s, io %s, cache %s",
           be_fe_path(be), d->nqueues, 1u << order, d->persistent ? "on" : "off", d->io->ops->name,
           cache_name(d->cfg.cache));
    bb_run(d); /* requests queued before we connected */
    return 0;
}

void bb_disconnect(struct be_dev *be)
{
    struct bb_dev *d = be_priv(be);
    if (d->io)
        d->io->ops->drain(d->io);
    bb_drop_pending(d);
    be_loop_del_timer(be_loop_of(be), d->run_timer);
    d->run_timer = 0;
    unsigned pg = 0;
    uint64_t pgmaps = 0, pgcalls = 0;
    for (unsigned i = 0; d->q && i < d->nqueues; i++) {
        struct bb_queue *q = &d->q[i];
        pg += bb_pgcache_count(q->pgc);
        pgmaps += bb_pgcache_maps(q->pgc);
        pgcalls += bb_pgcache_calls(q->pgc);
        bb_pgcache_free(q->pgc);
        be_ring_unmap(be, &q->ring);
        free(q->reqs);
        free(q->pass);
    }
    if (d->io)
        d->io->ops->free(d->io);
    d->io = NULL;
    if (d->q)
        BE_LOG(be,
               "served %llu requests (%llu refused or failed); persistent grants: %u mapped, "
               "%llu maps in %llu calls; at most %u pages of requests mapped at once",
               (unsigned long long)d->nreq, (unsigned long long)d->nerr, pg,
               (unsigned long long)pgmaps, (unsigned long long)pgcalls, d->mapped_peak);
    free(d->q);
    d->q = NULL;
    d->nqueues = 0;
    d->nreq = d->nerr = 0;
    d->mapped = d->mapped_peak = 0;
    d->first_taken = 0;
}
