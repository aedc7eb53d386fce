/* nf_tap.c - the guest's TAP interface. */
#define _GNU_SOURCE
#include "nf_tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static void tap_msg(char *msg, size_t len, const char *what, const char *name)
{
    snprintf(msg, len, "%s %s: %s", what, name, strerror(errno));
}

static int open_netlink(void)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    if (fd < 0)
        return -1;
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK};
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int open_queue(const char *name, unsigned queues, char *got)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | (queues > 1 ? IFF_MULTI_QUEUE : 0);
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    snprintf(got, IFNAMSIZ, "%s", ifr.ifr_name);
    return fd;
}

int nf_tap_open(struct nf_tap *t, const char *name, const uint8_t mac[6], unsigned queues,
                char *msg, size_t len)
{
    memset(t, 0, sizeof(*t));
    t->fd = t->ctl = t->nl = -1;
    for (unsigned q = 0; q < NF_MAX_QUEUES; q++)
        t->qfd[q] = -1;
    if (strlen(name) == 0 || strlen(name) >= IFNAMSIZ || strchr(name, '/') || strchr(name, '%')) {
        errno = EINVAL;
        snprintf(msg, len, "'%s' is not an interface name", name);
        return -1;
    }
    if (queues == 0 || queues > NF_MAX_QUEUES) {
        errno = EINVAL;
        snprintf(msg, len, "%u queues: at most %u", queues, NF_MAX_QUEUES);
        return -1;
    }
    char got[IFNAMSIZ];
    for (unsigned q = 0; q < queues; q++) {
        t->qfd[q] = open_queue(q ? t->name : name, queues, got);
        if (t->qfd[q] < 0) {
            tap_msg(msg, len, "TUNSETIFF (create the TAP)", name);
            goto fail;
        }
        if (q == 0)
            snprintf(t->name, sizeof(t->name), "%s", got);
        t->nq++;
    }
    t->fd = t->qfd[0];
    struct ifreq ifr;
    /* No offloads towards us until a backend says what it takes. */
    if (ioctl(t->fd, TUNSETOFFLOAD, 0u) < 0) {
        tap_msg(msg, len, "TUNSETOFFLOAD", t->name);
        goto fail;
    }
    t->offload = 0;
    int off = 0;
    if (ioctl(t->fd, TUNSETCARRIER, &off) < 0) {
        tap_msg(msg, len, "TUNSETCARRIER", t->name);
        goto fail;
    }
    t->carrier = false;
    t->ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (t->ctl < 0) {
        tap_msg(msg, len, "socket for ioctls on", t->name);
        goto fail;
    }
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->name);
    ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
    memcpy(ifr.ifr_hwaddr.sa_data, mac, 6);
    if (ioctl(t->ctl, SIOCSIFHWADDR, &ifr) < 0) {
        tap_msg(msg, len, "set the MAC address of", t->name);
        goto fail;
    }
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t->name);
    if (ioctl(t->ctl, SIOCGIFINDEX, &ifr) < 0) {
        tap_msg(msg, len, "SIOCGIFINDEX", t->name);
        goto fail;
    }
    t->ifindex = ifr.ifr_ifindex;
    t->nl = open_netlink(); /* optional: the configuration is polled as well */
    return 0;
fail:;
    int e = errno;
    nf_tap_close(t);
    errno = e;
    return -1;
}

void nf_tap_close(struct nf_tap *t)
{
    if (!t)
        return;
    if (t->nl >= 0)
        close(t->nl);
    if (t->ctl >= 0)
        close(t->ctl);
    for (unsigned q = 0; q < NF_MAX_QUEUES; q++)
        if (t->qfd[q] >= 0)
            close(t->qfd[q]);
    for (unsigned q = 0; q < NF_MAX_QUEUES; q++)
        t->qfd[q] = -1;
    t->fd = t->ctl = t->nl = -1;
    t->nq = 0;
}

int nf_tap_offload(struct nf_tap *t, unsigned tun_flags)
{
    if (tun_flags == t->offload)
        return 0;
    if (ioctl(t->fd, TUNSETOFFLOAD, tun_flags) < 0)
        return -1;
    t->offload = tun_flags;
    return 0;
}

int nf_tap_gso_max(struct nf_tap *t, unsigned bytes)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -1;
    struct timeval tv = {.tv_sec = 1};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    struct {
        struct nlmsghdr n;
        struct ifinfomsg i;
        struct rtattr a;
        uint32_t v;
    } req;
    memset(&req, 0, sizeof(req));
    req.n.nlmsg_len = sizeof(req);
    req.n.nlmsg_type = RTM_NEWLINK;
    req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    req.n.nlmsg_seq = 1;
    req.i.ifi_family = AF_UNSPEC;
    req.i.ifi_index = t->ifindex;
    req.a.rta_type = IFLA_GSO_MAX_SIZE;
    req.a.rta_len = RTA_LENGTH(sizeof(uint32_t));
    req.v = bytes;
    int r = -1;
    if (send(fd, &req, sizeof(req), 0) == (ssize_t)sizeof(req)) {
        char buf[512] __attribute__((aligned(NLMSG_ALIGNTO)));
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
        if (n >= (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) && h->nlmsg_type == NLMSG_ERROR) {
            const struct nlmsgerr *e = NLMSG_DATA(h);
            if (e->error == 0)
                r = 0;
            else
                errno = -e->error;
        } else if (n >= 0) {
            errno = EPROTO;
        }
    }
    int e = errno;
    close(fd);
    errno = e;
    return r;
}

int nf_tap_carrier(struct nf_tap *t, bool on)
{
    if (on == t->carrier)
        return 0;
    int v = on;
    if (ioctl(t->fd, TUNSETCARRIER, &v) < 0)
        return -1;
    t->carrier = on;
    return 0;
}

bool nf_tap_link_event(struct nf_tap *t)
{
    if (t->nl < 0)
        return false;
    bool ours = false;
    char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
    for (int i = 0; i < 64; i++) {
        ssize_t n = recv(t->nl, buf, sizeof(buf), 0);
        if (n < 0 && errno == ENOBUFS) {
            ours = true; /* events were lost: look again */
            continue;
        }
        if (n <= 0)
            break;
        int left = (int)n;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
             h = NLMSG_NEXT(h, left)) {
            if ((h->nlmsg_type == RTM_NEWLINK || h->nlmsg_type == RTM_DELLINK) &&
                h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct ifinfomsg))) {
                const struct ifinfomsg *ifi = NLMSG_DATA(h);
                if (ifi->ifi_index == t->ifindex)
                    ours = true;
            }
        }
    }
    return ours;
}
