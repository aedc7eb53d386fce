/* nb_publish.c - what netback offers (netif.h), written before each
 * InitWait; and hotplug-status, which libxl waits for once a vif is on its
 * bridge (we attach it ourselves, instead of a hotplug script).
 */
#define _GNU_SOURCE
#include "nb.h"

#include "xs_util.h"

#include <errno.h>
#include <string.h>

struct kv {
    const char *key;
    unsigned val;
};

int nb_publish(struct be_dev *be, xs_transaction_t t)
{
    const struct kv kvs[] = {
        {"feature-rx-copy", 1},
        {"feature-rx-flip", 0},
        {"feature-sg", 1},
        {"feature-gso-tcpv4", 1},
        {"feature-gso-tcpv6", 1},
        {"feature-ipv6-csum-offload", 1},
        {"feature-multicast-control", 1},
        {"feature-dynamic-multicast-control", 1},
        {"feature-split-event-channels", 1},
        {"multi-queue-max-queues", NB_MAX_QUEUES},
    };
    for (size_t i = 0; i < sizeof(kvs) / sizeof(kvs[0]); i++) {
        if (xsu_printf(be_xs(be), t, be_path(be), kvs[i].key, "%u", kvs[i].val) < 0) {
            be_error(be, errno, "writing %s/%s: %s", be_path(be), kvs[i].key, strerror(errno));
            return -1;
        }
    }
    if (xsu_printf(be_xs(be), t, be_path(be), "hotplug-status", "connected") < 0) {
        be_error(be, errno, "writing %s/hotplug-status: %s", be_path(be), strerror(errno));
        return -1;
    }
    return 0;
}
