/* blk_xenbus.c - blkif keys. */
#define _GNU_SOURCE
#include "blk_xenbus.h"

#include "blk_ring.h"
#include "blk_xen.h"
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
    *why = "max-ring-page-order";
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, "max-ring-page-order", 31, 0, &order) < 0)
        return -1;
    *why = "max-ring-pages";
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, "max-ring-pages", UINT32_MAX, 1, &pages) < 0)
        return -1;
    /* The legacy key counts pages, a power of two. */
    unsigned legacy = 0;
    while (legacy < 31 && (2ull << legacy) <= pages)
        legacy++;
    f->max_ring_order = (unsigned)order > legacy ? (unsigned)order : legacy;
    *why = "multi-queue-max-queues";
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, "multi-queue-max-queues", UINT32_MAX, 1,
                             &queues) < 0)
        return -1;
    f->max_queues = (unsigned)queues;
    return 0;
}

int blk_read_device(struct sfx *x, struct blk_features *f, const char **why)
{
    struct xs_handle *xs = sfx_xs(x);
    uint64_t v;
    *why = "sectors";
    /* The size in bytes must fit an int64 (NBD's export size). */
    if (xsu_read_u64(xs, XBT_NULL, x->be, "sectors", INT64_MAX >> BLK_SECTOR_SHIFT, &v) < 0)
        return -1;
    if (v == 0) {
        errno = EINVAL;
        return -1;
    }
    f->sectors = v;
    *why = "sector-size";
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, "sector-size", BLK_PAGE_SIZE, 512, &v) < 0)
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
    *why = "info";
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, "info", UINT32_MAX, 0, &v) < 0)
        return -1;
    f->info = (uint32_t)v;
    struct {
        const char *key;
        bool *out;
    } bools[] = {{"feature-flush-cache", &f->flush},
                 {"feature-barrier", &f->barrier},
                 {"feature-discard", &f->discard},
                 {"feature-persistent", &f->persistent}};
    for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
        *why = bools[i].key;
        if (read_bool(x, bools[i].key, bools[i].out) < 0)
            return -1;
    }
    *why = "feature-max-indirect-segments";
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, "feature-max-indirect-segments", UINT32_MAX, 0,
                             &v) < 0)
        return -1;
    f->max_indirect = v > BLKIF_MAX_SEGMENTS_PER_REQUEST ? (uint32_t)v : 0;
    *why = "discard-granularity";
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, "discard-granularity", UINT32_MAX, f->sector_size,
                             &v) < 0)
        return -1;
    f->discard_granularity = (uint32_t)v;
    *why = "discard-alignment";
    if (xsu_read_u64_default(xs, XBT_NULL, x->be, "discard-alignment", UINT32_MAX, 0, &v) < 0)
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
        if (xsu_printf(xs, t, x->fe, "ring-ref", "%u", refs[0]) < 0)
            return -1;
    } else {
        if (xsu_printf(xs, t, x->fe, "ring-page-order", "%u", order) < 0 ||
            xsu_printf(xs, t, x->fe, "num-ring-pages", "%u", 1u << order) < 0)
            return -1;
        for (unsigned i = 0; i < (1u << order); i++) {
            char key[32];
            snprintf(key, sizeof(key), "ring-ref%u", i);
            if (xsu_printf(xs, t, x->fe, key, "%u", refs[i]) < 0)
                return -1;
        }
    }
    if (xsu_printf(xs, t, x->fe, "event-channel", "%u", port) < 0 ||
        xsu_printf(xs, t, x->fe, "protocol", "%s", XEN_IO_PROTO_ABI_NATIVE) < 0 ||
        xsu_printf(xs, t, x->fe, "feature-persistent", "1") < 0)
        return -1;
    return 0;
}

int blk_write_transport(struct sfx *x, const uint32_t *refs, unsigned order, unsigned port)
{
    blk_remove_transport(x);
    struct transport tr = {.x = x, .refs = refs, .order = order, .port = port};
    return xsu_txn(sfx_xs(x), write_all, &tr, NULL);
}

void blk_remove_transport(struct sfx *x)
{
    static const char *const keys[] = {"ring-ref", "ring-page-order", "num-ring-pages",
                                       "event-channel"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        sfx_remove(x, keys[i]);
    for (unsigned i = 0; i < (1u << BLK_MAX_RING_ORDER); i++) {
        char key[32];
        snprintf(key, sizeof(key), "ring-ref%u", i);
        sfx_remove(x, key);
    }
}
