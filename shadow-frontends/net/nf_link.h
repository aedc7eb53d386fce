/* nf_link.h - one transport of the NIC to one backend: a connection per
 * queue (nf_conn.h) and what was negotiated with that backend (its
 * features, the multicast filter asked of it). The live transport is one; a
 * hot standby's idle transport (schema.md, "The hot standby's connection")
 * is another, set up the same way in its slot and moved into the live one
 * by value at a promotion: a connection's state points at its shared pages,
 * never into itself.
 */
#ifndef NF_LINK_H
#define NF_LINK_H

#include "nf_conn.h"
#include "nf_tap.h" /* NF_MAX_QUEUES */
#include "nf_xenbus.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Pages one queue grants: its two rings, tx pages and rx buffers. */
#define NF_QUEUE_GRANTS (2u + NF_TX_PAGES + NF_RX_BUFS)

struct nf_link {
    struct nf_conn *q[NF_MAX_QUEUES];
    unsigned nq;
    struct nf_features feat;
    bool filter_on; /* request-multicast-control as written for this backend */
};

/* What a new transport asks for. */
struct nf_link_want {
    unsigned queues; /* at most; the backend's max and the TAP's queues bound it too */
    bool track;      /* record tx packets for a replay (the shadow) */
    bool filter;     /* ask the backend to filter multicast (if it can) */
    bool offloads;   /* our rx offload keys on */
};

/* The backend's features (x->be) and whether it serves our NIC: its mac,
 * and the mac of the frontend dir x->dev (a slot's is the toolstack's
 * copy), where they name one, must be mac. 0; -1 (why: the key and the
 * error; retried); 1 with why filled: another NIC. */
int nf_link_negotiate(struct nf_link *l, struct sfx *x, const uint8_t mac[6], char *why,
                      size_t len);

/* Share min(want->queues, the backend's max, tap_nq) queues with x->be_id
 * (rings, tx pages, every rx buffer posted, a port each) and write the
 * transport keys into x->fe in one transaction. 0, or -1 with errno and why
 * filled (what was shared is undone). */
int nf_link_share(struct nf_link *l, xengntshr_handle *gs, xenevtchn_handle *xce, struct sfx *x,
                  const struct nf_link_want *want, unsigned tap_nq, char *why, size_t len);

/* Unshare and free every queue. Safe on an empty or half-shared link. */
void nf_link_free(struct nf_link *l);

/* A failed link's retirement: its ports unbound now (nf_link_retire), its
 * pages unshared one region a call later (nf_link_release_step: true while
 * more remain; the link is empty after the last), so that a switch to the
 * standby does not wait for them (unsharing what a dying domain still maps
 * took 0.5-1.2 s on Xen in QEMU). Until then they stay granted to the
 * failed domain, which is fenced or gone, and are never used again. */
void nf_link_retire(struct nf_link *l);
bool nf_link_release_step(struct nf_link *l);

/* to's queues go; from's become to's, and from is empty. */
void nf_link_take(struct nf_link *to, struct nf_link *from);

/* Pages the link grants now. */
unsigned nf_link_grants(const struct nf_link *l);

#endif
