/* nb_tap.c - the driver domain's end of a vif: a TAP device (IFF_TAP,
 * IFF_NO_PI, IFF_VNET_HDR, one fd per queue with IFF_MULTI_QUEUE) in this
 * process's network namespace, given the MTU and the MAC fe:ff:ff:ff:ff:ff
 * (as Xen's vif scripts give a vif: never the guest's own), attached to the
 * bridge (SIOCBRADDIF) and brought up. It is not persistent: when the
 * process closes it or dies, the kernel removes it and its bridge port.
 */
#define _GNU_SOURCE
#include "nb.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int ctl_socket(void)
{
    return socket(AF_LOCAL, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

int nb_tap_bridge_exists(const char *bridge)
{
    int s = ctl_socket();
    if (s < 0)
        return -1;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", bridge);
    int r = ioctl(s, SIOCGIFINDEX, &ifr);
    int e = errno;
    close(s);
    errno = e;
    return r < 0 ? -1 : 0;
}

static int open_queue(struct nb_tap *t, unsigned i, char *msg, size_t msglen)
{
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(msg, msglen, "open /dev/net/tun: %s", strerror(errno));
        return -1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->name);
    /* The first queue creates the device and must not attach to one that
     * exists (another process's TAP, or another interface of that name). */
    ifr.ifr_flags =
        IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE | (i == 0 ? IFF_TUN_EXCL : 0);
    int hdr = (int)NB_VNET_HDR;
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        snprintf(msg, msglen, "TUNSETIFF %s (queue %u): %s%s", t->name, i, strerror(errno),
                 errno == EBUSY ? " (an interface of that name exists)" : "");
        close(fd);
        return -1;
    }
    if (ioctl(fd, TUNSETVNETHDRSZ, &hdr) < 0) {
        snprintf(msg, msglen, "TUNSETVNETHDRSZ %s: %s", t->name, strerror(errno));
        close(fd);
        return -1;
    }
    t->fd[i] = fd;
    t->nfd = i + 1;
    return 0;
}

/* The interface settings, through a control socket s. */
static int configure(struct nb_tap *t, int s, const struct nb_config *c, char *msg, size_t msglen)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->name);
    ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
    memset(ifr.ifr_hwaddr.sa_data, 0xff, 6);
    ifr.ifr_hwaddr.sa_data[0] = (char)0xfe;
    if (ioctl(s, SIOCSIFHWADDR, &ifr) < 0) {
        snprintf(msg, msglen, "setting the MAC of %s: %s", t->name, strerror(errno));
        return -1;
    }
    ifr.ifr_mtu = (int)c->mtu;
    if (ioctl(s, SIOCSIFMTU, &ifr) < 0) {
        snprintf(msg, msglen, "setting MTU %u on %s: %s", c->mtu, t->name, strerror(errno));
        return -1;
    }
    if (ioctl(s, SIOCGIFINDEX, &ifr) < 0) {
        snprintf(msg, msglen, "SIOCGIFINDEX %s: %s", t->name, strerror(errno));
        return -1;
    }
    t->ifindex = ifr.ifr_ifindex;
    struct ifreq br;
    memset(&br, 0, sizeof(br));
    snprintf(br.ifr_name, sizeof(br.ifr_name), "%s", c->bridge);
    br.ifr_ifindex = t->ifindex;
    if (ioctl(s, SIOCBRADDIF, &br) < 0) {
        snprintf(msg, msglen, "adding %s to bridge %s: %s", t->name, c->bridge, strerror(errno));
        return -1;
    }
    t->bridged = true;
    snprintf(t->bridge, sizeof(t->bridge), "%s", c->bridge);
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->name);
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
        snprintf(msg, msglen, "SIOCGIFFLAGS %s: %s", t->name, strerror(errno));
        return -1;
    }
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0) {
        snprintf(msg, msglen, "bringing %s up: %s", t->name, strerror(errno));
        return -1;
    }
    return 0;
}

int nb_tap_open(struct nb_tap *t, const struct nb_config *c, unsigned nq, unsigned offloads,
                char *msg, size_t msglen)
{
    memset(t, 0, sizeof(*t));
    for (unsigned i = 0; i < NB_MAX_QUEUES; i++)
        t->fd[i] = -1;
    snprintf(t->name, sizeof(t->name), "%s", c->ifname);
    if (nq == 0 || nq > NB_MAX_QUEUES) {
        snprintf(msg, msglen, "%u TAP queues", nq);
        return -1;
    }
    for (unsigned i = 0; i < nq; i++)
        if (open_queue(t, i, msg, msglen) < 0)
            return -1;
    if (ioctl(t->fd[0], TUNSETOFFLOAD, offloads) < 0) {
        snprintf(msg, msglen, "TUNSETOFFLOAD %#x on %s: %s", offloads, t->name, strerror(errno));
        return -1;
    }
    int s = ctl_socket();
    if (s < 0) {
        snprintf(msg, msglen, "control socket: %s", strerror(errno));
        return -1;
    }
    int r = configure(t, s, c, msg, msglen);
    close(s);
    return r;
}

void nb_tap_close(struct nb_tap *t)
{
    if (t->bridged) {
        int s = ctl_socket();
        struct ifreq br;
        memset(&br, 0, sizeof(br));
        snprintf(br.ifr_name, sizeof(br.ifr_name), "%s", t->bridge);
        br.ifr_ifindex = t->ifindex;
        if (s >= 0) {
            ioctl(s, SIOCBRDELIF, &br); /* gone with the device anyway */
            close(s);
        }
        t->bridged = false;
    }
    for (unsigned i = 0; i < t->nfd; i++)
        if (t->fd[i] >= 0)
            close(t->fd[i]);
    t->nfd = 0;
}
