/* blk_transport.c - one connection's ring, pool and plan (see
 * blk_transport.h). */
#define _GNU_SOURCE
#include "blk_transport.h"

#include "blk_xen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_DATA_PAGES 16u /* blk_class_new refuses a budget leaving fewer */

int blk_transport_open(struct blk_transport *t)
{
    memset(t, 0, sizeof(*t));
    t->xce = xenevtchn_open(NULL, 0);
    return t->xce ? 0 : -1;
}

void blk_transport_close(struct blk_transport *t)
{
    if (!t)
        return;
    blk_transport_teardown(t, NULL);
    if (t->xce)
        xenevtchn_close(t->xce);
    t->xce = NULL;
}

static void free_slots(struct blk_transport *t)
{
    if (t->slots)
        for (unsigned i = 0; i < t->nslots; i++)
            free(t->slots[i].pages);
    free(t->slots);
    t->slots = NULL;
    t->nslots = 0;
}

void blk_transport_retire(struct blk_transport *t, struct sfx *x, struct blk_pool *retired)
{
    unsigned order = t->ring.order;
    if (t->ring_up)
        blk_ring_teardown(&t->ring);
    if (t->pool_up && retired) {
        blk_pool_fini(retired);
        *retired = t->pool;
        memset(&t->pool, 0, sizeof(t->pool));
    } else if (t->pool_up) {
        blk_pool_fini(&t->pool);
    }
    t->ring_up = t->pool_up = false;
    free_slots(t);
    if (t->published && x)
        blk_remove_transport(x, (int)order);
    t->published = false;
}

void blk_transport_teardown(struct blk_transport *t, struct sfx *x)
{
    blk_transport_retire(t, x, NULL);
}

int blk_transport_setup(struct blk_transport *t, xengntshr_handle *gs, const struct blk_limits *lim,
                        struct sfx *x, unsigned prefill, char *why, size_t len)
{
    const char *key;
    blk_transport_teardown(t, NULL); /* a set-up transport is never overwritten */
    if (blk_read_transport(x, &t->f, &key) < 0) {
        snprintf(why, len, "backend %s: bad %s: %s", x->be, key, strerror(errno));
        return -1;
    }
    unsigned order = t->f.max_ring_order;
    if (order > lim->max_ring_order)
        order = lim->max_ring_order;
    if (order > BLK_MAX_RING_ORDER)
        order = BLK_MAX_RING_ORDER;
    while (order && (1u << order) + MIN_DATA_PAGES > lim->max_grants)
        order--;
    if (blk_ring_setup(&t->ring, gs, t->xce, x->be_id, order) < 0) {
        snprintf(why, len, "share a %u-page ring with domain %u and bind a port: %s", 1u << order,
                 x->be_id, strerror(errno));
        return -1;
    }
    t->ring_up = true;
    if (blk_pool_init(&t->pool, gs, x->be_id, lim->max_grants - (1u << order)) < 0) {
        snprintf(why, len, "data page pool for domain %u: %s", x->be_id, strerror(errno));
        return -1;
    }
    t->pool_up = true;
    if (prefill && blk_pool_prefill(&t->pool, prefill) < 0) {
        snprintf(why, len, "share %u data pages with domain %u: %s", prefill, x->be_id,
                 strerror(errno));
        return -1;
    }
    t->published = true;
    if (blk_write_transport(x, t->ring.refs, order, t->ring.port) < 0) {
        snprintf(why, len, "xenstore: write the transport keys under %s: %s", x->fe,
                 strerror(errno));
        return -1;
    }
    return 0;
}

/* Segments per request: direct (11), or indirect up to what both ends allow
 * and the pool can hold for one request. */
static void plan(struct blk_transport *t, const struct blk_limits *lim)
{
    unsigned segs = BLKIF_MAX_SEGMENTS_PER_REQUEST;
    t->indirect = false;
    if (t->f.max_indirect && lim->max_indirect > BLKIF_MAX_SEGMENTS_PER_REQUEST) {
        unsigned s = t->f.max_indirect < lim->max_indirect ? t->f.max_indirect : lim->max_indirect;
        unsigned cap = BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST * (unsigned)BLK_SEGS_PER_INDIRECT;
        if (s > cap)
            s = cap;
        unsigned nind = (s + (unsigned)BLK_SEGS_PER_INDIRECT - 1) / (unsigned)BLK_SEGS_PER_INDIRECT;
        if (s + nind > t->pool.max_pages)
            s = t->pool.max_pages - nind;
        if (s > BLKIF_MAX_SEGMENTS_PER_REQUEST) {
            segs = s;
            t->indirect = true;
        }
    }
    t->segs_max = segs;
}

int blk_transport_connect(struct blk_transport *t, const struct blk_limits *lim, struct sfx *x,
                          char *why, size_t len)
{
    struct blk_features f = t->f;
    const char *key;
    if (blk_read_device(x, &f, &key) < 0) {
        snprintf(why, len, "backend %s: bad or missing %s: %s", x->be, key, strerror(errno));
        return -1;
    }
    t->f = f;
    plan(t, lim);
    free_slots(t);
    t->nslots = blk_ring_size(&t->ring);
    t->slots = calloc(t->nslots, sizeof(*t->slots));
    if (!t->slots) {
        t->nslots = 0;
        snprintf(why, len, "out of memory for %u ring slots", blk_ring_size(&t->ring));
        return -1;
    }
    for (unsigned i = 0; i < t->nslots; i++) {
        t->slots[i].pages = calloc(t->segs_max, sizeof(uint32_t));
        if (!t->slots[i].pages) {
            free_slots(t);
            snprintf(why, len, "out of memory for %u ring slots", blk_ring_size(&t->ring));
            return -1;
        }
    }
    return 0;
}
