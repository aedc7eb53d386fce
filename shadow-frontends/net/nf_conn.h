/* nf_conn.h - one connection of the netif frontend to one backend: the tx
 * and rx shared rings, their event channel, the granted tx pages and rx
 * buffers, and the protocol on them (netif.h "Guest transmit", "Guest
 * receive"). Every response is copied out of the ring and checked before
 * anything acts on it; a bad one ends the connection (the caller starts a
 * recovery) and nothing it names is touched. A connection is never reused:
 * a new backend gets a new one, granted to its domain.
 */
#ifndef NF_CONN_H
#define NF_CONN_H

#include "nf_xen.h"

#include <linux/virtio_net.h>

#include <stdbool.h>
#include <stdint.h>
#include <xenevtchn.h>
#include <xengnttab.h>

struct nf_conn {
    xengntshr_handle *gs;
    xenevtchn_handle *xce;
    uint32_t domid;
    void *txs, *rxs;
    uint32_t tx_ref, rx_ref;
    netif_tx_front_ring_t tx;
    netif_rx_front_ring_t rx;
    evtchn_port_t port;
    bool bound;
    uint8_t *txpg; /* NF_TX_PAGES pages, read-only to the backend */
    uint32_t txref[NF_TX_PAGES];
    uint8_t *rxpg; /* NF_RX_BUFS pages, writable by the backend */
    uint32_t rxref[NF_RX_BUFS];

    /* tx: a page per data slot in flight; its index is the request id */
    uint16_t txfree[NF_TX_PAGES];
    unsigned ntxfree;
    bool txbusy[NF_TX_PAGES];
    uint64_t txsince[NF_TX_PAGES]; /* when it was issued (ms) */
    unsigned tx_nulls;             /* NETIF_RSP_NULL responses due (extra-info slots) */
    bool txmc[NF_TX_PAGES];        /* that request is a multicast list operation */
    unsigned tx_mcast_pending;     /* multicast list requests not yet answered */
    uint64_t mcast_err;            /* ... answered with an error */
    bool probe_out;                /* the liveness probe is unanswered (nf_probe.h) */
    uint16_t probe_id;             /* ... its request id */
    uint64_t probes, probes_answered;

    /* tx packets in issue order, for the replay of those never answered;
     * only with track (the shadow: set by the caller after setup) */
    bool track;
    struct nf_txpkt {
        struct virtio_net_hdr vh; /* its offloads, as the TAP gave them */
        uint64_t seq;
        uint16_t len;
        uint8_t nslots;
        uint16_t ids[NF_MAX_SLOTS];
    } txq[NF_TX_PAGES];
    unsigned txq_head, txq_n;
    uint64_t tx_seq;
    uint64_t txowner[NF_TX_PAGES]; /* the seq of the packet a page carries */

    /* rx: the packet being assembled from consecutive slots */
    unsigned rx_len, rx_slots;
    bool rx_bad;    /* a slot of it had an error status: dropped when complete */
    bool rx_extras; /* the next slot is an extra-info */
    bool rx_more;   /* data slots follow (the last data slot's more_data) */
    uint16_t rx_flags;
    bool rx_has_gso;
    netif_extra_info_t rx_gso;
    uint8_t rxbuf[NF_RX_MAX];

    /* counters */
    uint64_t tx_pkts, tx_err, rx_pkts, rx_err;
};

/* Share the rings and pages with domid, post every rx buffer, bind an
 * unbound port for domid. 0 or -1 (errno; everything undone). */
int nf_conn_setup(struct nf_conn *c, xengntshr_handle *gs, xenevtchn_handle *xce, uint32_t domid);
/* Unbind, unshare everything. Safe on a zeroed or half-set-up connection. */
void nf_conn_teardown(struct nf_conn *c);
/* Unbind its port only: no event of the failed backend's wakes us again. */
void nf_conn_unbind(struct nf_conn *c);
/* Unshare one of its shared regions (rx buffers, tx pages, the two rings);
 * true while more remain. Its pages go back one region a call. */
bool nf_conn_release_step(struct nf_conn *c);

/* Room for a packet of nslots data slots plus extra slots. */
bool nf_conn_tx_room(const struct nf_conn *c, unsigned nslots, unsigned extras);
/* Queue a frame (len <= NF_MAX_FRAME, and <= NF_PAGE without sg) in
 * ceil(len / NF_PAGE) data slots, with its NETTXF_* flags and a GSO
 * extra-info slot if gso; vh is kept for a replay (with track). The caller checked the
 * room. */
void nf_conn_tx_frame(struct nf_conn *c, const uint8_t *frame, unsigned len, uint16_t flags,
                      const netif_extra_info_t *gso, const struct virtio_net_hdr *vh, uint64_t now);
/* Queue a multicast list operation (XEN_NETIF_EXTRA_TYPE_MCAST_ADD/DEL). */
void nf_conn_tx_mcast(struct nf_conn *c, uint8_t type, const uint8_t addr[6], uint64_t now);
/* No tx request of any kind is outstanding (a probe included). */
bool nf_conn_tx_idle(const struct nf_conn *c);
/* Queue the liveness probe (nf_probe.h): a multicast list operation
 * XEN_NETIF_EXTRA_TYPE_MCAST_DEL of addr, which the caller chose outside the
 * backend's list, so that it changes nothing. Only on an idle tx ring: false
 * (nothing queued) while any tx request is outstanding, a probe included.
 * Answered like any tx request, and under the same deadline (nf_conn_oldest). */
bool nf_conn_tx_probe(struct nf_conn *c, const uint8_t addr[6], uint64_t now);
/* Make queued requests (tx and reposted rx) visible and notify if asked. */
void nf_conn_push(struct nf_conn *c);
/* Acknowledge an event-channel notification on xce: every port of every
 * connection (the live ones and a standby's) is bound on it. */
void nf_conn_ack_event(xenevtchn_handle *xce);
/* A packet whose first slots were received now is dropped when complete
 * (the standby's, received before it was promoted). */
void nf_conn_rx_drop_partial(struct nf_conn *c);

/* Receive a complete packet: its first slot's NETRXF_* flags, its GSO
 * extra-info (or NULL). */
typedef void (*nf_rx_fn)(void *arg, const uint8_t *frame, unsigned len, uint16_t flags,
                         const netif_extra_info_t *gso);

/* Consume tx and rx responses (at most a bounded number per call). Returns
 * 0, 1 if there may be more, or -1 with a description of the protocol
 * violation in why: the connection must be torn down. */
int nf_conn_harvest(struct nf_conn *c, nf_rx_fn rx, void *arg, char *why, size_t len);

/* Copy out, oldest first, every data packet none of whose slots the backend
 * answered (it may not have sent them): fn(arg, vh, len) gives where its len
 * bytes go (NULL: skip it); none unless the connection tracks its packets
 * (track). Called before teardown; the pages are ours and only readable by
 * the backend. */
void nf_conn_unanswered(struct nf_conn *c,
                        uint8_t *(*fn)(void *arg, const struct virtio_net_hdr *vh, unsigned len),
                        void *arg);

/* The issue time of the oldest unanswered tx request; false if none. */
bool nf_conn_oldest(const struct nf_conn *c, uint64_t *since);

#endif
