/* nb_txcheck.h - decoding and validation of one guest-transmit packet from
 * a copy of the tx ring's slots (netif.h "Guest transmit"): the first data
 * slot (size = the whole packet), its extra-info slots, the further data
 * slots chained by NETTXF_more_data. Pure: no Xen, no I/O; unit-tested.
 */
#ifndef NB_TXCHECK_H
#define NB_TXCHECK_H

#include "xen_barriers.h"

#include <stdbool.h>
#include <stdint.h>
#include <xen/io/netif.h>

#define NB_PAGE_SIZE 4096u
/* Data slots one packet may use, either direction: the minimum every
 * backend must support (netif.h), which is also what Linux netfront sends. */
#define NB_MAX_SLOTS XEN_NETIF_NR_SLOTS_MIN
/* The smallest packet: an Ethernet header. */
#define NB_MIN_PKT 14u

struct nb_txpkt {
    unsigned nslots;    /* ring slots the packet uses: data and extra-info */
    unsigned ndata;     /* data slots */
    unsigned data_off;  /* slot index of data slot 1 (1 + number of extras) */
    uint16_t total;     /* the packet's size (the first slot's size) */
    uint16_t first_len; /* bytes in the first data slot */
    uint16_t flags;     /* the first slot's NETTXF_* */
    unsigned extras;    /* bit (1 << type) for each extra-info type present */
    netif_extra_info_t extra[XEN_NETIF_EXTRA_TYPE_MAX]; /* by type */
    int16_t status;  /* NETIF_RSP_OKAY, or NETIF_RSP_ERROR: drop it */
    const char *why; /* what is wrong, when status is not OKAY */
};

/* Decode the packet whose first slot is slots[0], of n slots copied from
 * the ring. Returns the number of slots it uses, p filled in (p->status says
 * whether it may be sent), or 0 if its slots continue past the n given. */
unsigned nb_tx_decode(const netif_tx_request_t *slots, unsigned n, struct nb_txpkt *p);

/* The packet carries a multicast list operation (a dummy, not transmitted). */
static inline bool nb_txpkt_is_mcast(const struct nb_txpkt *p)
{
    return p->extras &
           (1u << XEN_NETIF_EXTRA_TYPE_MCAST_ADD | 1u << XEN_NETIF_EXTRA_TYPE_MCAST_DEL);
}

/* Data slot k (0 <= k < p->ndata) of a packet decoded from slots. */
static inline const netif_tx_request_t *nb_txpkt_slot(const netif_tx_request_t *slots,
                                                      const struct nb_txpkt *p, unsigned k)
{
    return k == 0 ? &slots[0] : &slots[p->data_off + k - 1];
}

#endif
