/* nb_vnet.h - offloads across the TAP: netif's checksum flags and GSO
 * extra-info on one side, the virtio_net_hdr that IFF_VNET_HDR puts before
 * each frame on the other. Pure; unit-tested.
 *
 * Guest tx: NETTXF_csum_blank (the checksum field holds the pseudo-header
 * sum, as Linux's CHECKSUM_PARTIAL) becomes VIRTIO_NET_HDR_F_NEEDS_CSUM with
 * the TCP/UDP header located by parsing, since netif does not carry the
 * offsets; a GSO extra becomes gso_type/gso_size/hdr_len (and needs the
 * checksum too); NETTXF_data_validated becomes F_DATA_VALID.
 *
 * Guest rx: a partial checksum is passed on as NETRXF_csum_blank |
 * NETRXF_data_validated when the frontend accepts it for that IP version
 * and the offsets are where the frontend will look (the TCP/UDP header),
 * else completed here; F_DATA_VALID becomes NETRXF_data_validated; TCP GSO
 * becomes a GSO extra for a frontend that takes it (the TAP is only given
 * the offloads the frontend can take, see nb_vnet_tun_offloads).
 */
#ifndef NB_VNET_H
#define NB_VNET_H

#include "nb_txcheck.h"

#include <linux/virtio_net.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the frontend can receive. */
struct nb_rxcaps {
    bool sg;    /* feature-sg: packets over several slots */
    bool csum4; /* not feature-no-csum-offload */
    bool csum6; /* feature-ipv6-csum-offload */
    bool gso4;  /* feature-gso-tcpv4 */
    bool gso6;  /* feature-gso-tcpv6 */
};

/* How a received frame is presented to the frontend. */
struct nb_rxmeta {
    uint16_t flags;   /* NETRXF_csum_blank, NETRXF_data_validated */
    uint8_t gso_type; /* XEN_NETIF_GSO_TYPE_*, NONE for none */
    uint16_t gso_size;
};

/* The TUNSETOFFLOAD flags for a frontend with caps c. */
unsigned nb_vnet_tun_offloads(const struct nb_rxcaps *c);

/* The header for guest packet pkt (len bytes), decoded as p. 0, or -1 with
 * *why: an offload was asked for that cannot be placed. */
int nb_vnet_from_tx(const struct nb_txpkt *p, const uint8_t *pkt, size_t len,
                    struct virtio_net_hdr *h, const char **why);

/* Convert frame pkt read from the TAP with header h, completing its
 * checksum in place if the frontend will not. 0, or -1 with *why (drop). */
int nb_vnet_to_rx(const struct virtio_net_hdr *h, uint8_t *pkt, size_t len,
                  const struct nb_rxcaps *c, struct nb_rxmeta *m, const char **why);

#endif
