/* nb_publish.c - what netback offers (netif.h), written before each
 * InitWait; and hotplug-status, which libxl waits for once a vif is on its
 * bridge (we attach it ourselves, instead of a hotplug script).
 */
#define _GNU_SOURCE
#include "nb.h"

#include "pv-keys.h"
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
        {PVK_NET_FEATURE_RX_COPY, 1},
        {PVK_NET_FEATURE_RX_FLIP, 0},
        {PVK_NET_FEATURE_SG, 1},
        {PVK_NET_FEATURE_GSO_TCPV4, 1},
        {PVK_NET_FEATURE_GSO_TCPV6, 1},
        {PVK_NET_FEATURE_IPV6_CSUM, 1},
        {PVK_NET_FEATURE_MCAST_CONTROL, 1},
        {PVK_NET_FEATURE_DYN_MCAST_CTRL, 1},
        {PVK_NET_FEATURE_SPLIT_EVTCHN, 1},
        {PVK_MQ_MAX_QUEUES, NB_MAX_QUEUES},
    };
    for (size_t i = 0; i < sizeof(kvs) / sizeof(kvs[0]); i++) {
        if (xsu_printf(be_xs(be), t, be_path(be), kvs[i].key, "%u", kvs[i].val) < 0) {
            be_error(be, errno, "writing %s/%s: %s", be_path(be), kvs[i].key, strerror(errno));
            return -1;
        }
    }
    if (xsu_printf(be_xs(be), t, be_path(be), PVK_HOTPLUG_STATUS, "connected") < 0) {
        be_error(be, errno, "writing %s/hotplug-status: %s", be_path(be), strerror(errno));
        return -1;
    }
    return 0;
}
