/* nf_xenbus.h - the netif keys (netif.h): what the backend offers, the
 * frontend's transport and feature keys (written in one transaction), and
 * the MAC address the toolstack gives the NIC. Values from the store are
 * peer input: every one is parsed with full checks. */
#ifndef NF_XENBUS_H
#define NF_XENBUS_H

#include "sf_xenbus.h"

#include <stdbool.h>
#include <stdint.h>

struct nf_features {
    bool sg;            /* feature-sg: multi-slot tx packets */
    bool gso4, gso6;    /* feature-gso-tcpv4/6 */
    bool csum6;         /* feature-ipv6-csum-offload */
    bool mcast;         /* feature-multicast-control */
    bool mcast_dynamic; /* feature-dynamic-multicast-control */
    unsigned max_queues;
    bool has_mac; /* the backend dir names a mac */
    uint8_t mac[6];
};

/* "xx:xx:xx:xx:xx:xx" into mac; a unicast address. 0 or -1. */
int nf_parse_mac(const char *s, uint8_t mac[6]);

/* The frontend dir's mac. 0, or -1 with errno (ENOENT, EINVAL). */
int nf_read_fe_mac(struct sfx *x, uint8_t mac[6]);

/* The backend's features. feature-rx-copy is required (we do not flip
 * pages). 0, or -1 with errno and *why naming the key. */
int nf_read_features(struct sfx *x, struct nf_features *f, const char **why);

/* Write the transport keys — for one queue tx-ring-ref, rx-ring-ref,
 * event-channel; for nq > 1 multi-queue-num-queues and queue-<k>/ each —
 * and request-rx-copy, feature-rx-notify, feature-sg, our rx offloads
 * (feature-no-csum-offload, feature-ipv6-csum-offload, feature-gso-tcpv4/6:
 * all on when offloads) and request-multicast-control, in one transaction. */
int nf_write_transport(struct sfx *x, unsigned nq, const uint32_t *tx_refs, const uint32_t *rx_refs,
                       const unsigned *ports, bool mcast_filter, bool offloads);
/* Rewrite request-multicast-control (for a backend with the dynamic feature). */
int nf_write_mcast_request(struct sfx *x, bool on);
/* Remove the transport keys; absent ones are fine. */
void nf_remove_transport(struct sfx *x);

#endif
