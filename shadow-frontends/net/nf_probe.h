/* nf_probe.h - the liveness probe of an idle tx path (README.md, "Liveness
 * probe"). A hung backend is seen by a tx request unanswered past the
 * deadline; a guest that only receives sends none, so after idle_ms with no
 * tx request outstanding the frontend posts one that changes nothing: a
 * multicast list operation (netif.h, XEN_NETIF_EXTRA_TYPE_MCAST_DEL) for an
 * address the backend's list does not hold, answered like any tx request
 * and under the same deadline, and no frame on the wire. This is its
 * schedule and its address; pure, no Xen. The request itself is
 * nf_conn_tx_probe.
 */
#ifndef NF_PROBE_H
#define NF_PROBE_H

#include "nf_shadow.h"

#include <stdbool.h>
#include <stdint.h>

struct nf_probe {
    unsigned idle_ms;     /* probe after this long with no tx request outstanding; 0: never */
    uint64_t quiet_since; /* nothing outstanding since (while busy: the last look) */
    uint64_t sent;        /* probes posted, every connection */
};

/* A new connection: quiet from now. */
void nf_probe_start(struct nf_probe *p, uint64_t now);
/* Once a turn; busy: a tx request (a probe too) is outstanding, or one is
 * about to be. True when a probe is due now. */
bool nf_probe_due(struct nf_probe *p, bool busy, uint64_t now);
/* A probe was posted: the next is due idle_ms after it is answered, so two
 * are always at least idle_ms apart. */
void nf_probe_sent(struct nf_probe *p, uint64_t now);
/* ms until a probe is due if nothing is sent meanwhile (the poll timeout);
 * UINT64_MAX when off. */
uint64_t nf_probe_wait(const struct nf_probe *p, uint64_t now);

/* The probe's address: multicast, locally administered, and in neither a
 * (the guest's list) nor b (the backend's, as we programmed it), so that
 * deleting it is a no-op for the backend. Each list holds at most
 * NF_MCAST_MAX addresses, so one of the first 2 * NF_MCAST_MAX + 1
 * candidates is free. */
void nf_probe_addr(const struct nf_shadow *a, const struct nf_shadow *b, uint8_t out[6]);

#endif
