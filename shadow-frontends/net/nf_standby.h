/* nf_standby.h - the NIC's hot standby (schema.md, "The hot standby's
 * connection"): a second transport (nf_link.h, d->sb) negotiated with the
 * standby domain's netback in the slot the toolstack names, Connected and
 * idle, which a promotion makes the live one with no handshake. These are
 * the standby ops of the NIC's class (sfc_ops).
 *
 * Nothing is sent on it before the promotion: no frame, no multicast list
 * operation, no liveness probe. Its rx buffers are posted at once, and what
 * the standby's netback puts in them while it is held is taken and dropped
 * (counted), the buffers posted again. A held netback is connected: its
 * vif is up on its domain's bridge and gets what that bridge floods
 * (broadcast, multicast, unicast for a MAC it has not learnt) - copies of
 * what the live backend delivers, or frames for nobody. Buffers posted only
 * at the promotion would not keep them out: netback would hold them in its
 * queue and the TAP's (up to txqueuelen) and deliver them stale after the
 * switch; a ring never drained would fill with them the same way. So the
 * standby's queue stays empty, and at the promotion whatever the rings hold
 * is dropped before the first frame is delivered: nothing the standby
 * received before it was promoted reaches the guest.
 *
 * At the promotion: the standby's transport becomes the live one, what
 * connect restores on a new backend is restored (offloads from its
 * features, carrier, the multicast list and filter request, the MTU check;
 * the held and unanswered tx frames follow), and one RARP announcement of
 * our MAC goes first (nf_announce.h): the failed domain is only paused, its
 * port still where every switch sends our traffic.
 */
#ifndef NF_STANDBY_H
#define NF_STANDBY_H

#include "nf_dev.h"

int nf_standby_setup(void *cls, struct sfx *sx, char *why, size_t len);
int nf_standby_connect(void *cls, struct sfx *sx, char *what, size_t len);
void nf_standby_teardown(void *cls, struct sfx *sx);
int nf_standby_promote(void *cls, struct sfx *x, char *what, size_t len);

/* While a standby transport is set up: drop what it received, post its
 * buffers again (a bounded number of responses per call); a response it
 * never asked for drops the standby (sfc_standby_fault). */
void nf_standby_drain(struct nf_dev *d);

#endif
