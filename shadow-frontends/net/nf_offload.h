/* nf_offload.h - offloads between the TAP's virtio_net_hdr and netif's
 * flags and GSO extra-info, both ways: checksums left partial (csum_blank)
 * and TCP segmentation (GSO) are passed through when the other side takes
 * them, and done here in software when it does not (a checksum) or refused
 * (a GSO frame for a backend without GSO). Pure: no Xen, no I/O.
 */
#ifndef NF_OFFLOAD_H
#define NF_OFFLOAD_H

#include "nf_xen.h"

#include <linux/virtio_net.h>
#include <stdbool.h>
#include <stdint.h>

/* What the backend takes on tx (its feature keys, with feature-sg). */
struct nf_txcaps {
    bool csum6;      /* feature-ipv6-csum-offload (IPv4 checksum offload is netif's default) */
    bool gso4, gso6; /* feature-gso-tcpv4/6, and feature-sg */
};

/* The TUN_F_* offloads to offer the guest kernel for these caps. */
unsigned nf_off_tun_flags(const struct nf_txcaps *c);

/* A frame read from the TAP (h, then frame[0..len)): its netif tx flags and,
 * for a GSO frame, the GSO extra-info (*gso_out true). A partial checksum the
 * backend cannot take is completed in frame. -1 with *why: drop the frame. */
int nf_off_tx(const struct virtio_net_hdr *h, uint8_t *frame, unsigned len,
              const struct nf_txcaps *c, uint16_t *flags, netif_extra_info_t *gso, bool *gso_out,
              const char **why);

/* A packet received (NETRXF_* flags of its first slot, and its GSO extra-info
 * or NULL): the virtio_net_hdr to write before it. -1 with *why: drop it. */
int nf_off_rx(uint16_t rxflags, const netif_extra_info_t *gso, const uint8_t *frame, unsigned len,
              struct virtio_net_hdr *h, const char **why);

#endif
