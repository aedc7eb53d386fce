/* bb_publish.c - what blkback offers (blkif.h "Backend XenBus Nodes"),
 * written before each InitWait: features, transport limits and the device's
 * properties.
 */
#define _GNU_SOURCE
#include "bb.h"

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
        {"feature-flush-cache", 1},
        {"feature-barrier", rw},
        {"feature-discard", discard},
        {"discard-granularity", k->discard_granularity},
        {"discard-alignment", 0},
        {"discard-secure", 0},
        {"feature-persistent", 1},
        {"feature-max-indirect-segments", BB_MAX_INDIRECT_SEGS},
        {"max-ring-page-order", BB_MAX_RING_ORDER},
        {"multi-queue-max-queues", BB_MAX_QUEUES},
        {"sectors", k->sectors},
        {"sector-size", BB_SECTOR_SIZE},
        {"physical-sector-size", k->phys_sector_size},
        {"info", d->cfg.readonly ? VDISK_READONLY : 0},
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
