/* nb.h - netback's device, queue and packet objects, shared by the files
 * of backends/net/. See backends/README.md for the design.
 */
#ifndef NB_H
#define NB_H

#include "be.h"
#include "nb_credit.h"
#include "nb_mcast.h"
#include "nb_spoof.h"
#include "nb_mcwatch.h"
#include "nb_txcheck.h"
#include "nb_vnet.h"

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#define NB_MAX_QUEUES 4u
#define NB_RING_SIZE  __CONST_RING_SIZE(netif_tx, NB_PAGE_SIZE) /* 256, rx too */
#define NB_VNET_HDR   sizeof(struct virtio_net_hdr)
/* Packets handled in one pass over a ring, each direction. */
#define NB_BATCH 64u
/* Staging memory per queue and direction: a pass stops when the next
 * largest packet would not fit. */
#define NB_STAGE_BYTES (512u << 10)
/* The largest frame read from the TAP (64 KiB of GSO payload plus headers). */
#define NB_RX_MAX_FRAME (65536u + 256u)
#define NB_TX_MAX_FRAME 65536u
/* A received frame waits this long for rx buffers, then is dropped (a
 * frontend that posts fewer buffers than the frame needs, or none). */
#define NB_RX_DRAIN_MS   5000u
#define NB_QUIET_NOTE_US 5000000u /* tx quiet this long: its end is logged (nb_tx.c) */

struct nb_config {
    uint8_t mac[6];                 /* the guest's MAC, from "mac" */
    struct nb_spoof spoof;          /* its MAC and "ip": what its frames may say they are from */
    char bridge[IFNAMSIZ];          /* from "bridge" */
    char ifname[IFNAMSIZ];          /* "vifname", else vif<fe>.<devid> */
    unsigned mtu;                   /* "mtu", default 1500 */
    uint64_t rate_bytes, rate_usec; /* "rate"; 0: unlimited */
};

/* The TAP device: one fd per queue (IFF_MULTI_QUEUE), attached to the bridge. */
struct nb_tap {
    char name[IFNAMSIZ];
    char bridge[IFNAMSIZ]; /* the bridge it was added to */
    int fd[NB_MAX_QUEUES];
    unsigned nfd;
    int ifindex;
    bool bridged;
};

/* A received frame waiting for rx buffers, or being copied into them. */
struct nb_rxpkt {
    uint8_t *data; /* in the queue's rx staging memory */
    unsigned len;
    unsigned need;       /* ring slots: data slots, plus one for a GSO extra */
    unsigned first;      /* ring index of its first slot (once slots are taken) */
    unsigned seg0, nseg; /* its grant copy segments */
    struct nb_rxmeta meta;
};

/* A guest packet of the current tx pass. */
struct nb_txq_pkt {
    struct nb_txpkt p;
    unsigned slot0;      /* index of its first slot in the queue's slot copy */
    uint8_t *buf;        /* NB_VNET_HDR, then the frame, in tx staging memory */
    unsigned seg0, nseg; /* its grant copy segments */
};

struct nb_dev;

struct nb_queue {
    struct nb_dev *d;
    unsigned idx;
    struct be_ring txr, rxr; /* rxr is bound only with split event channels */
    netif_tx_back_ring_t tx;
    netif_rx_back_ring_t rx;
    bool attached; /* tx and rx are set up */
    bool broken;   /* the frontend broke the protocol on this queue; not served */
    int fd;        /* its TAP queue */
    bool watched;  /* fd is in the loop */

    uint64_t kick_timer; /* more work, after the loop's other events */

    /* tx pass */
    RING_IDX tx_seen;    /* req_prod when a packet's slots were found incomplete */
    uint64_t tx_last_us; /* tx requests last found (or the attach): a long quiet is logged */
    netif_tx_request_t slots[NB_RING_SIZE]; /* copy of the unconsumed requests */
    struct nb_txq_pkt tpk[NB_BATCH];
    xengnttab_grant_copy_segment_t tseg[NB_RING_SIZE];
    uint8_t *tstage;

    /* rx pass */
    struct nb_rxpkt held; /* read from the TAP, waiting for buffers (held.len != 0) */
    uint64_t held_since_ms;
    uint64_t drain_timer; /* drops the held frame if its buffers never come */
    struct nb_rxpkt rpk[NB_BATCH];
    uint16_t rx_ids[NB_RING_SIZE]; /* ids of the requests taken, by ring index */
    bool rx_extra[NB_RING_SIZE];   /* the response slot holds an extra-info, by ring index */
    xengnttab_grant_copy_segment_t rseg[NB_RING_SIZE];
    uint8_t *rstage;
};

struct nb_dev {
    struct be_dev *be;
    struct nb_config cfg;
    struct nb_tap tap;

    /* The connection. */
    unsigned nq;
    struct nb_queue *q;
    struct nb_rxcaps caps;
    bool split;
    bool mcast_filter; /* request-multicast-control, sampled at connect and on changes */
    struct nb_mcwatch mcwatch;
    struct nb_mcast mcast;
    struct nb_credit credit;
    uint64_t credit_timer; /* tx waits for credit */

    /* Counters, logged at disconnect. */
    uint64_t tx_pkts, tx_bytes, tx_err, tx_spoofed, rx_pkts, rx_bytes, rx_err;
    uint64_t rx_drop_big, rx_drop_mcast, rx_drop_bad, rx_drop_stall, mcast_ops;
};

/* nb_config.c: toolstack keys. */
int nb_config_read(struct nb_dev *d);

/* nb_publish.c */
int nb_publish(struct be_dev *be, xs_transaction_t t);

/* nb_connect.c */
int nb_connect(struct be_dev *be);
void nb_disconnect(struct be_dev *be);
/* Watch (or stop watching) a queue's TAP fd. */
void nb_queue_watch(struct nb_queue *q, bool on);

/* nb_tap.c: the TAP device. On failure, msg says what failed. */
int nb_tap_open(struct nb_tap *t, const struct nb_config *c, unsigned nq, unsigned offloads,
                char *msg, size_t msglen);
void nb_tap_close(struct nb_tap *t);
/* Is the bridge there? 0, or -1 with errno. */
int nb_tap_bridge_exists(const char *bridge);

/* nb_tx.c: guest transmit. */
void nb_tx_run(struct nb_queue *q);
/* nb_rx.c: guest receive. */
void nb_rx_run(struct nb_queue *q);
/* Cancel the queue's drain timer (at disconnect). */
void nb_rx_stop(struct nb_queue *q);

/* nb_run.c: scheduling. */
/* Run both directions of every queue (after a fault ends, credit returns...). */
void nb_run_all(struct nb_dev *d);
/* Run q again once the loop has served its other events. */
void nb_kick(struct nb_queue *q);
void nb_unkick(struct nb_queue *q);
/* A queue's shared ring is broken: stop serving it, device Closing. */
void nb_queue_broken(struct nb_queue *q, const char *what, RING_IDX prod, RING_IDX ours);
/* The TAP failed under us (deleted, detached: err from read/write): stop
 * serving every queue, device Closing; the next connection makes a new TAP. */
void nb_tap_lost(struct nb_dev *d, const char *op, int err);
/* Is err from a TAP read/write a TAP that is gone (not a transient or per-frame error)? */
bool nb_tap_gone_errno(int err);
uint64_t nb_now_us(void);

/* nb_corrupt.c: the fault layer's corrupt hook (struct be_class_ops). */
bool nb_corrupt(struct be_dev *be, struct be_ring *r, RING_IDX idx, enum be_corrupt how);

#endif
