/* nb_config.c - the toolstack's keys in the backend dir, as libxl writes
 * them: mac, bridge, vifname, mtu, rate, and ip (the addresses the guest's
 * frames may come from, as vif-bridge's antispoof rules take it). (type,
 * script, handle and the hotplug keys are not ours to act on: we attach the
 * bridge ourselves.)
 * Each bad value is an error the operator can act on.
 */
#define _GNU_SOURCE
#include "nb.h"

#include "pv-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "xx:xx:xx:xx:xx:xx", hex digits only. */
static int parse_mac(const char *s, uint8_t mac[6])
{
    if (strlen(s) != 17)
        return -1;
    for (unsigned i = 0; i < 6; i++) {
        const char *p = s + i * 3;
        unsigned v = 0;
        for (unsigned k = 0; k < 2; k++) {
            char c = p[k];
            unsigned h = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                         : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                         : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                                : 16u;
            if (h > 15)
                return -1;
            v = v * 16 + h;
        }
        if (i < 5 && p[2] != ':')
            return -1;
        mac[i] = (uint8_t)v;
    }
    return 0;
}

/* An interface name the kernel would take: 1..15 bytes, no '/', ':' or space. */
static bool good_ifname(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= IFNAMSIZ || !strcmp(s, ".") || !strcmp(s, ".."))
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '/' || s[i] == ':' || s[i] <= ' ' || s[i] == 0x7f)
            return false;
    return true;
}

static int read_mac(struct nb_dev *d, struct xs_handle *xs, const char *dir)
{
    char *v = xsu_read(xs, XBT_NULL, dir, PVK_NET_MAC, 64);
    if (!v) {
        be_error(d->be, errno, "reading %s/mac: %s", dir, strerror(errno));
        return -1;
    }
    int r = parse_mac(v, d->cfg.mac);
    if (r < 0)
        be_error(d->be, EINVAL, "%s/mac '%s' is not a MAC address (xx:xx:xx:xx:xx:xx)", dir, v);
    else if (d->cfg.mac[0] & 1) {
        be_error(d->be, EINVAL, "%s/mac '%s' is a multicast address", dir, v);
        r = -1;
    }
    free(v);
    return r;
}

static int read_names(struct nb_dev *d, struct xs_handle *xs, const char *dir)
{
    char *v = xsu_read(xs, XBT_NULL, dir, PVK_NET_BRIDGE, 64);
    if (!v) {
        be_error(d->be, errno, "reading %s/bridge: %s", dir, strerror(errno));
        return -1;
    }
    if (!good_ifname(v)) {
        be_error(d->be, EINVAL, "%s/bridge '%s' is not an interface name", dir, v);
        free(v);
        return -1;
    }
    snprintf(d->cfg.bridge, sizeof(d->cfg.bridge), "%s", v);
    free(v);
    if (nb_tap_bridge_exists(d->cfg.bridge) < 0) {
        be_error(d->be, errno, "bridge %s: %s (in this driver domain's network namespace)",
                 d->cfg.bridge, strerror(errno));
        return -1;
    }
    v = xsu_read(xs, XBT_NULL, dir, PVK_NET_VIFNAME, 64);
    if (!v && errno != ENOENT) {
        be_error(d->be, errno, "reading %s/vifname: %s", dir, strerror(errno));
        return -1;
    }
    if (v && !good_ifname(v)) {
        be_error(d->be, EINVAL, "%s/vifname '%s' is not an interface name", dir, v);
        free(v);
        return -1;
    }
    if (v)
        snprintf(d->cfg.ifname, sizeof(d->cfg.ifname), "%s", v);
    else
        snprintf(d->cfg.ifname, sizeof(d->cfg.ifname), "vif%u.%u", be_fe_domid(d->be),
                 be_devid(d->be));
    free(v);
    return 0;
}

static int read_limits(struct nb_dev *d, struct xs_handle *xs, const char *dir)
{
    uint64_t mtu;
    if (xsu_read_u64_default(xs, XBT_NULL, dir, PVK_NET_MTU, 65535, 1500, &mtu) < 0) {
        be_error(d->be, errno, "%s/mtu: not a number in 68..65535: %s", dir, strerror(errno));
        return -1;
    }
    if (mtu < 68) {
        be_error(d->be, EINVAL, "%s/mtu %u is below 68", dir, (unsigned)mtu);
        return -1;
    }
    d->cfg.mtu = (unsigned)mtu;
    d->cfg.rate_bytes = d->cfg.rate_usec = 0;
    char *v = xsu_read(xs, XBT_NULL, dir, PVK_NET_RATE, 64);
    if (!v && errno != ENOENT) {
        be_error(d->be, errno, "reading %s/rate: %s", dir, strerror(errno));
        return -1;
    }
    if (v && nb_credit_parse(v, &d->cfg.rate_bytes, &d->cfg.rate_usec) < 0) {
        be_error(d->be, EINVAL, "%s/rate '%s' is not '<bytes>,<usec>' (both > 0)", dir, v);
        free(v);
        return -1;
    }
    free(v);
    return 0;
}

static int read_ips(struct nb_dev *d, struct xs_handle *xs, const char *dir)
{
    memcpy(d->cfg.spoof.mac, d->cfg.mac, 6);
    char *v = xsu_read(xs, XBT_NULL, dir, PVK_NET_IP, 1024);
    if (!v && errno != ENOENT) {
        be_error(d->be, errno, "reading %s/ip: %s", dir, strerror(errno));
        return -1;
    }
    const char *why = "";
    int r = v ? nb_spoof_parse_ips(v, &d->cfg.spoof, &why) : 0;
    if (r < 0)
        be_error(d->be, EINVAL, "%s/ip '%s': %s (space-separated IPv4 addresses)", dir, v, why);
    free(v);
    return r;
}

int nb_config_read(struct nb_dev *d)
{
    struct xs_handle *xs = be_xs(d->be);
    const char *dir = be_path(d->be);
    memset(&d->cfg, 0, sizeof(d->cfg));
    if (read_mac(d, xs, dir) < 0 || read_names(d, xs, dir) < 0 || read_limits(d, xs, dir) < 0 ||
        read_ips(d, xs, dir) < 0)
        return -1;
    return 0;
}
