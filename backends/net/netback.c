/* netback - Understudy's userspace netif backend: one process per virtual
 * network interface, in a driver domain.
 *
 *   netback --backend /local/domain/<self>/backend/vif/<fe-domid>/<devid>
 *
 * The xenbus state machine, rings and event loop are the backend core's
 * (backends/core); this file is the class's ops table. Design:
 * backends/README.md.
 */
#define _GNU_SOURCE
#include "nb.h"

#include "pv-keys.h"

#include <stdio.h>

static int nb_setup(struct be_dev *be)
{
    struct nb_dev *d = be_priv(be);
    d->be = be;
    if (nb_config_read(d) < 0)
        return -1;
    const uint8_t *m = d->cfg.mac;
    char rate[64] = "unlimited";
    if (d->cfg.rate_bytes)
        snprintf(rate, sizeof(rate), "%llu bytes per %llu us",
                 (unsigned long long)d->cfg.rate_bytes, (unsigned long long)d->cfg.rate_usec);
    BE_LOG(be, "guest mac %02x:%02x:%02x:%02x:%02x:%02x, TAP %s on bridge %s, mtu %u, rate %s",
           m[0], m[1], m[2], m[3], m[4], m[5], d->cfg.ifname, d->cfg.bridge, d->cfg.mtu, rate);
    return 0;
}

static void nb_teardown(struct be_dev *be)
{
    (void)be; /* setup opens nothing: the TAP lives with the connection */
}

static const char *const nb_config_keys[] = {PVK_NET_MAC, PVK_NET_BRIDGE, PVK_NET_VIFNAME,
                                             PVK_NET_MTU, PVK_NET_RATE,   NULL};

static const struct be_class_ops nb_ops = {
    .size = sizeof(struct be_class_ops),
    .prog = "netback",
    .type = "vif",
    .config_keys = nb_config_keys,
    .setup = nb_setup,
    .publish = nb_publish,
    .connect = nb_connect,
    .disconnect = nb_disconnect,
    .teardown = nb_teardown,
    .corrupt = nb_corrupt,
};

int main(int argc, char **argv)
{
    static struct nb_dev dev;
    return be_main(&nb_ops, &dev, argc, argv);
}
