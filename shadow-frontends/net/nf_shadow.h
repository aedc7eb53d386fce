/* nf_shadow.h - the shadow of a NIC: the interface configuration the guest
 * has set on its TAP (MTU, flags, link-layer multicast list), as read from
 * the kernel, and what follows from it: the receive filter a NIC applies in
 * hardware, and the multicast list operations a backend needs to match it.
 * Pure bookkeeping over plain data; the readers of /sys and /proc are here
 * too, isolated in nf_shadow_read.
 */
#ifndef NF_SHADOW_H
#define NF_SHADOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NF_MCAST_MAX 64u /* addresses recorded; more: the list is "overflowed" */
/* A buffer for /proc/net/dev_mcast: a guest with thousands of groups
 * still gets a bounded read (past it, the list counts as overflowed). */
#define NF_MCAST_TEXT_MAX (64u * 1024u)

struct nf_shadow {
    unsigned mtu;
    bool up, promisc, allmulti;
    unsigned nmc;
    bool mc_overflow; /* more than NF_MCAST_MAX addresses: take all multicast */
    uint8_t mc[NF_MCAST_MAX][6];
};

/* Read the interface's configuration (MTU and flags from /sys/class/net/IF,
 * the multicast list from /proc/net/dev_mcast, read into the caller's buf of
 * len bytes) into s. 0 or -1 (errno). */
int nf_shadow_read(const char *ifname, struct nf_shadow *s, char *buf, size_t len);

/* Parse /proc/net/dev_mcast's text for ifname into s's list. Returns the
 * number of lines for ifname, or -1 (EINVAL: a malformed line for it). */
int nf_shadow_parse_mcast(const char *text, const char *ifname, struct nf_shadow *s);

/* The frame with destination dst is one the guest asked to receive: its
 * own address, broadcast, any multicast with allmulti, the listed multicast,
 * or anything in promiscuous mode. */
bool nf_shadow_accepts(const struct nf_shadow *s, const uint8_t mac[6], const uint8_t dst[6]);

/* The backend should filter multicast for us: it can, and we want only a
 * list (not promiscuous, not allmulti, the list not overflowed). */
bool nf_shadow_wants_filter(const struct nf_shadow *s);

/* Is a in s's list? */
bool nf_shadow_has(const struct nf_shadow *s, const uint8_t a[6]);

/* "mtu=1500 up promisc allmulti mc=3" for logs. */
void nf_shadow_describe(const struct nf_shadow *s, char *buf, size_t len);

#endif
