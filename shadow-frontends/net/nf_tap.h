/* nf_tap.h - the guest's network interface: a TAP device (IFF_TAP |
 * IFF_NO_PI) that ordinary programs use, with the NIC's MAC address. It
 * lives as long as the frontend process, across every recovery; only its
 * carrier follows the backend. */
#ifndef NF_TAP_H
#define NF_TAP_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#define NF_MAX_QUEUES 2u /* 386 grants each: two transports of one queue fit gntalloc's 1024 */

struct nf_tap {
    int fd;                 /* queue 0 (every ioctl goes here), non-blocking */
    int qfd[NF_MAX_QUEUES]; /* every queue; qfd[0] == fd */
    unsigned nq;
    int ctl; /* an AF_INET datagram socket for interface ioctls */
    int nl;  /* rtnetlink, RTMGRP_LINK: wakes us on link changes; -1 if unavailable */
    int ifindex;
    char name[IFNAMSIZ];
    /* What the last TUNSETCARRIER and TUNSETOFFLOAD set: each takes the
     * kernel's rtnl lock, which a link change's work may hold for long
     * under emulation, so one that changes nothing is not made. */
    bool carrier;
    unsigned offload;
};

/* Create (or attach to) the TAP named name (IFF_VNET_HDR: every frame read
 * or written starts with a struct virtio_net_hdr), set its MAC, carrier off,
 * no offloads yet; with queues > 1, a multi-queue TAP (IFF_MULTI_QUEUE) with
 * that many queues. With gso_max, the largest GSO packet the kernel may hand
 * us is bounded to it (0: not set; see nf_tap_offload).
 * 0 or -1 with errno and a message in msg. */
int nf_tap_open(struct nf_tap *t, const char *name, const uint8_t mac[6], unsigned queues,
                char *msg, size_t len);
/* Bound the TAP's GSO packets (IFLA_GSO_MAX_SIZE, rtnetlink). 0 or -1 (errno). */
int nf_tap_gso_max(struct nf_tap *t, unsigned bytes);
/* TUNSETOFFLOAD: the TUN_F_* offloads the kernel may use towards us (no
 * call if they are those set already). 0 or -1 (errno). */
int nf_tap_offload(struct nf_tap *t, unsigned tun_flags);
void nf_tap_close(struct nf_tap *t);
/* TUNSETCARRIER (no call if the carrier is so already). 0 or -1 (errno). */
int nf_tap_carrier(struct nf_tap *t, bool on);
/* Drain rtnetlink messages; true if one was about our interface. */
bool nf_tap_link_event(struct nf_tap *t);

#endif
