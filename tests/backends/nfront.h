/* nfront.h - a minimal conforming netif frontend for tests, over Debian's
 * libxenstore, libxengnttab (gntshr) and libxenevtchn: the xenbus handshake
 * (one or more queues, shared or split event channels, the features it
 * asks for), tx of frames through granted pages (one or several slots,
 * extra-info slots), rx buffers posted and re-posted, received packets
 * checked against the protocol (same slot as the request, echoed id,
 * offset + size within the page, extra-info where flagged), and raw ring
 * access for hostile tests. Single-threaded; every wait is bounded.
 */
#ifndef NFRONT_H
#define NFRONT_H

#include "xen_barriers.h"

#include <stdbool.h>
#include <stdint.h>
#include <xen/io/netif.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>

#define NF_MAX_QUEUES 5u  /* one above netback's limit, to test the refusal */
#define NF_TX_PAGES   64u /* per queue: one page per tx slot in flight */
#define NF_RX_BUFS    64u /* per queue, at most */
#define NF_PAGE       4096u
#define NF_MAX_PKT    (65536u + 256u)
#define NF_RX_QUEUE   256u /* received packets kept until read */

struct nf_opts {
    unsigned queues;
    bool split;        /* event-channel-tx/-rx */
    bool no_rx_copy;   /* hostile: request-rx-copy=0 */
    bool no_rx_notify; /* hostile: no feature-rx-notify */
    bool sg, gso4, gso6, csum6, no_csum, mcast_ctrl;
    unsigned rx_bufs; /* rx buffers posted per queue */
    unsigned timeout_ms;
    bool bogus_ring_ref; /* hostile: a tx-ring-ref the backend cannot map */
};

struct nf_queue {
    void *txs, *rxs;
    uint32_t tx_ref, rx_ref;
    netif_tx_front_ring_t tx;
    netif_rx_front_ring_t rx;
    evtchn_port_t port_tx, port_rx;
    bool bound_tx, bound_rx;
    uint8_t *txpg; /* NF_TX_PAGES pages */
    uint32_t txrefs[NF_TX_PAGES];
    bool txbusy[NF_TX_PAGES]; /* a slot using it awaits its response */
    uint8_t *rxpg;            /* o.rx_bufs pages */
    uint32_t rxrefs[NF_RX_BUFS];
    uint16_t posted[256]; /* the id posted in each rx ring slot */
};

/* A received packet. */
struct nf_pkt {
    uint8_t *data; /* malloc'ed */
    unsigned len;
    unsigned queue;
    uint16_t flags; /* the first slot's NETRXF_* */
    uint8_t gso_type;
    uint16_t gso_size;
    unsigned slots;
};

struct nf_txstat {
    uint64_t ok, error, dropped, null, other;
};

struct nf {
    struct xs_handle *xs;
    xengntshr_handle *gs;
    xenevtchn_handle *xce;
    char fe[256], be[256];
    unsigned be_domid;
    struct nf_opts o;
    uint8_t mac[6]; /* from FE/mac */

    /* What the backend offers. */
    unsigned max_queues;
    bool be_sg, be_gso4, be_gso6, be_mcast, be_split, be_csum6;

    bool connected;
    unsigned nq;
    struct nf_queue q[NF_MAX_QUEUES];
    struct nf_txstat txs;
    int16_t last_status; /* of the last packet's first data slot */
    uint64_t rx_errors;  /* rx responses with an error status */
    /* The frontend's own keys or state were written behind the connection's
     * back (nhostile): the backend may have read features other than t->o,
     * so a GSO extra is not checked against them. nf_connect clears it. */
    bool keys_tampered;

    struct nf_pkt rxq[NF_RX_QUEUE];
    unsigned rx_head, rx_count;
    uint64_t rx_dropped; /* rxq full */
    unsigned next_q;     /* tx queue to use next */
    char err[512];
};

void nf_default_opts(struct nf_opts *o);
struct nf *nf_open(const char *fe);
void nf_free(struct nf *t);

int nf_connect(struct nf *t, const struct nf_opts *o);
int nf_reconnect(struct nf *t);
int nf_close(struct nf *t);
void nf_drop(struct nf *t);
int nf_wait_state(struct nf *t, const char *dir, unsigned mask, unsigned timeout_ms);
int nf_write_state(struct nf *t, int state);

/* One slot of a frame to send: len bytes at offset off of its page. */
struct nf_slot {
    uint16_t off, len;
};

/* Send a frame on queue qi over the slots given (NULL, 0: one slot at
 * offset 0), flags NETTXF_csum_blank etc., extras (n of them, in order).
 * Waits for tx pages if needed. 0, or -1 (t->err). */
int nf_send(struct nf *t, unsigned qi, const uint8_t *frame, unsigned len,
            const struct nf_slot *slots, unsigned nslots, uint16_t flags,
            const netif_extra_info_t *extras, unsigned nextras);
/* Push raw requests (hostile and validation tests): exactly as given. */
void nf_push_raw(struct nf *t, unsigned qi, const netif_tx_request_t *reqs, unsigned n);
/* Wait until every tx slot in flight on every queue is answered. 0, or -1. */
int nf_tx_drain(struct nf *t, unsigned timeout_ms);
/* Collect tx responses now: the number seen, -1 on a protocol violation. */
int nf_tx_reap(struct nf *t, unsigned qi);
/* Read the next n tx responses of queue qi as they are (no id check; the
 * ids' pages are freed): 0, or -1 (timeout or a broken index, t->err). */
int nf_collect(struct nf *t, unsigned qi, unsigned n, unsigned timeout_ms,
               netif_tx_response_t *out);
/* A tx page of queue qi (for raw requests) and its ref. */
uint8_t *nf_txpage(struct nf *t, unsigned qi, unsigned i);

/* Next received packet within timeout_ms: 1 (caller frees p->data), 0 on
 * timeout, -1 on a protocol violation (t->err). */
int nf_recv(struct nf *t, struct nf_pkt *p, unsigned timeout_ms);
/* Serve both rings of every queue once (responses, re-posting). -1 on a violation. */
int nf_poll(struct nf *t);
/* The rx rings only (tx responses left for the caller). -1 on a violation. */
int nf_poll_rx(struct nf *t);
/* Take the next packet already received: 1 (caller frees p->data) or 0. */
int nf_take(struct nf *t, struct nf_pkt *p);
/* Wait for an event on any port, up to ms. */
void nf_wait_event(struct nf *t, unsigned ms);
void nf_notify_tx(struct nf *t, unsigned qi);

/* A multicast list operation: a dummy tx request with a MCAST_ADD/DEL extra.
 * Returns its status, or -100 (no answer). */
int nf_mcast(struct nf *t, bool add, const uint8_t mac[6]);

uint64_t nf_now_ms(void);

#endif
