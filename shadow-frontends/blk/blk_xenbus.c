/* blk_xenbus.c - blkif keys. */
#define _GNU_SOURCE
#include "blk_xenbus.h"

#include "blk_ring.h"
#include "blk_xen.h"
#include "pv-keys.h"
#include "xs_txn.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int read_bool(struct sfx *x, const char *key, bool *out)
{
    uint64_t v;
    if (xsu_read_u64_default(sfx_xs(x), XBT_NULL, x->be, key, UINT32_MAX, 0, &v) < 0)
        return -1;
    *out = v != 0;
    return 0;
}

int blk_read_transport(struct sfx *x, struct blk_features *f, const char **why)
{
    struct xs_handle *xs = sfx_xs(x);
    uint64_t order, pages, queues;
    *why = PVK_BLK_MAX_RING_PAGE_ORDER;
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, PVK_BLK_MAX_RING_PAGE_ORDER, 31, 0, &order) < 0)
        return -1;
    *why = PVK_BLK_MAX_RING_PAGES;
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, PVK_BLK_MAX_RING_PAGES, UINT32_MAX, 1, &pages) <
        0)
        return -1;
    /* The legacy key counts pages, a power of two. */
    unsigned legacy = 0;
    while (legacy < 31 && (2ull << legacy) <= pages)
        legacy++;
    f->max_ring_order = (unsigned)order > legacy ? (unsigned)order : legacy;
    *why = PVK_MQ_MAX_QUEUES;
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, PVK_MQ_MAX_QUEUES, UINT32_MAX, 1, &queues) < 0)
        return -1;
    f->max_queues = (unsigned)queues;
    return 0;
}

int blk_read_device(struct sfx *x, struct blk_features *f, const char **why)
{
    struct xs_handle *xs = sfx_xs(x);
    uint64_t v;
    *why = PVK_BLK_SECTORS;
    /* The size in bytes must fit an int64 (NBD's export size). */
    if (xsu_read_u64(xs, XBT_NULL, x->be, PVK_BLK_SECTORS, INT64_MAX >> BLK_SECTOR_SHIFT, &v) < 0)
        return -1;
    if (v == 0) {
        errno = EINVAL;
        return -1;
    }
    f->sectors = v;
    *why = PVK_BLK_SECTOR_SIZE;
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, PVK_BLK_SECTOR_SIZE, BLK_PAGE_SIZE, 512, &v) < 0)
        return -1;
    if (v < 512 || (v & (v - 1))) {
        errno = EINVAL;
        return -1;
    }
    f->sector_size = (uint32_t)v;
    if (f->sectors % (f->sector_size >> BLK_SECTOR_SHIFT)) {
        *why = "sectors (not a whole number of sector-size blocks)";
        errno = EINVAL;
        return -1;
    }
    *why = PVK_BLK_INFO;
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, PVK_BLK_INFO, UINT32_MAX, 0, &v) < 0)
        return -1;
    f->info = (uint32_t)v;
    struct {
        const char *key;
        bool *out;
    } bools[] = {{PVK_BLK_FEATURE_FLUSH, &f->flush},
                 {PVK_BLK_FEATURE_BARRIER, &f->barrier},
                 {PVK_BLK_FEATURE_DISCARD, &f->discard},
                 {PVK_BLK_FEATURE_PERSISTENT, &f->persistent}};
    for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
        *why = bools[i].key;
        if (read_bool(x, bools[i].key, bools[i].out) < 0)
            return -1;
    }
    *why = PVK_BLK_FEATURE_MAX_INDIRECT;
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, PVK_BLK_FEATURE_MAX_INDIRECT, UINT32_MAX, 0, &v) <
        0)
        return -1;
    f->max_indirect = v > BLKIF_MAX_SEGMENTS_PER_REQUEST ? (uint32_t)v : 0;
    *why = PVK_BLK_DISCARD_GRANULARITY;
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, PVK_BLK_DISCARD_GRANULARITY, UINT32_MAX,
                             f->sector_size, &v) < 0)
        return -1;
    f->discard_granularity = (uint32_t)v;
    *why = PVK_BLK_DISCARD_ALIGNMENT;
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, PVK_BLK_DISCARD_ALIGNMENT, UINT32_MAX, 0, &v) < 0)
        return -1;
    f->discard_alignment = (uint32_t)v;
    return 0;
}

struct transport {
    struct sfx *x;
    const uint32_t *refs;
    unsigned order, port;
};

static int write_all(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    const struct transport *tr = arg;
    const struct sfx *x = tr->x;
    const uint32_t *refs = tr->refs;
    unsigned order = tr->order, port = tr->port;
    if (order == 0) {
        if (xsu_printf(xs, t, x->fe, PVK_RING_REF, "%u", refs[0]) < 0)
            return -1;
    } else {
        if (xsu_printf(xs, t, x->fe, PVK_BLK_RING_PAGE_ORDER, "%u", order) < 0 ||
            xsu_printf(xs, t, x->fe, PVK_BLK_NUM_RING_PAGES, "%u", 1u << order) < 0)
            return -1;
        for (unsigned i = 0; i < (1u << order); i++) {
            char key[32];
            snprintf(key, sizeof(key), PVK_BLK_RING_REF_FMT, i);
            if (xsu_printf(xs, t, x->fe, key, "%u", refs[i]) < 0)
                return -1;
        }
    }
    if (xsu_printf(xs, t, x->fe, PVK_EVENT_CHANNEL, "%u", port) < 0 ||
        xsu_printf(xs, t, x->fe, PVK_PROTOCOL, "%s", XEN_IO_PROTO_ABI_NATIVE) < 0 ||
        xsu_printf(xs, t, x->fe, PVK_BLK_FEATURE_PERSISTENT, "1") < 0)
        return -1;
    return 0;
}

int blk_write_transport(struct sfx *x, const uint32_t *refs, unsigned order, unsigned port)
{
    blk_remove_transport(x, -1); /* an earlier connection's, of any order */
    struct transport tr = {.x = x, .refs = refs, .order = order, .port = port};
    return xsu_txn(sfx_xs(x), write_all, &tr, NULL);
}

/* Each key is a xenstore round trip, and a recovery waits for them: only
 * those of the order given, and of those only the ones there. */
void blk_remove_transport(struct sfx *x, int order)
{
    enum { NREFS = 1u << BLK_MAX_RING_ORDER };
    bool any = order < 0;
    const char *keys[4 + NREFS];
    char refs[NREFS][32];
    size_t n = 0;
    keys[n++] = PVK_EVENT_CHANNEL;
    if (any || order == 0)
        keys[n++] = PVK_RING_REF;
    if (order != 0) {
        keys[n++] = PVK_BLK_RING_PAGE_ORDER;
        keys[n++] = PVK_BLK_NUM_RING_PAGES;
        unsigned nr = any ? NREFS : 1u << (order & 31);
        for (unsigned i = 0; i < nr && i < NREFS; i++) {
            snprintf(refs[i], sizeof(refs[i]), PVK_BLK_RING_REF_FMT, i);
            keys[n++] = refs[i];
        }
    }
    sfx_remove_present(x, keys, n);
}
