/* bb_publish.c - what blkback offers (blkif.h "Backend XenBus Nodes"),
 * written before each InitWait: features, transport limits and the device's
 * properties.
 */
#define _GNU_SOURCE
#include "bb.h"

#include "pv-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <string.h>

struct kv {
    const char *key;
    uint64_t val;
};

int bb_publish(struct be_dev *be, xs_transaction_t t)
{
    struct bb_dev *d = be_priv(be);
    struct bb_disk *k = &d->disk;
    bool rw = !d->cfg.readonly;
    bool discard = rw && d->cfg.discard_enable && k->can_discard;
    const struct kv kvs[] = {
        {PVK_BLK_FEATURE_FLUSH, 1},
        {PVK_BLK_FEATURE_BARRIER, rw},
        {PVK_BLK_FEATURE_DISCARD, discard},
        {PVK_BLK_DISCARD_GRANULARITY, k->discard_granularity},
        {PVK_BLK_DISCARD_ALIGNMENT, 0},
        {PVK_BLK_DISCARD_SECURE, 0},
        {PVK_BLK_FEATURE_PERSISTENT, 1},
        {PVK_BLK_FEATURE_MAX_INDIRECT, BB_MAX_INDIRECT_SEGS},
        {PVK_BLK_MAX_RING_PAGE_ORDER, BB_MAX_RING_ORDER},
        {PVK_MQ_MAX_QUEUES, BB_MAX_QUEUES},
        {PVK_BLK_SECTORS, k->sectors},
        {PVK_BLK_SECTOR_SIZE, BB_SECTOR_SIZE},
        {PVK_BLK_PHYSICAL_SECTOR_SIZE, k->phys_sector_size},
        {PVK_BLK_INFO, d->cfg.readonly ? VDISK_READONLY : 0},
    };
    for (size_t i = 0; i < sizeof(kvs) / sizeof(kvs[0]); i++) {
        if (!discard && !strncmp(kvs[i].key, "discard-", 8))
            continue;
        if (xsu_printf(be_xs(be), t, be_path(be), kvs[i].key, "%llu",
                       (unsigned long long)kvs[i].val) < 0) {
            be_error(be, errno, "writing %s/%s: %s", be_path(be), kvs[i].key, strerror(errno));
            return -1;
        }
    }
    d->lim.sectors = k->sectors;
    d->lim.readonly = d->cfg.readonly;
    d->lim.discard = discard;
    d->lim.max_indirect = BB_MAX_INDIRECT_SEGS;
    return 0;
}
