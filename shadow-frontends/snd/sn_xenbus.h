/* sn_xenbus.h - the card's sndif keys: the versions a backend offers, and
 * the version and per-stream transport keys the frontend writes (sndif.h
 * "Frontend XenBus Nodes"), all in one transaction. */
#ifndef SN_XENBUS_H
#define SN_XENBUS_H

#include "sf_xenbus.h"
#include "sn_stream.h"

#include <stdbool.h>

/* Does the backend offer version v in its "versions" list? 1, 0, or -1
 * (errno; ENOENT when it wrote none) with its value (or "") in seen. */
int sn_backend_offers(struct sfx *x, unsigned v, char *seen, size_t len);
/* version, then each stream's ring-ref, event-channel, evt-ring-ref and
 * evt-event-channel, of its live transport or (standby) of its hot
 * standby's, into x's dir. 0 or -1 (errno). */
int sn_write_transport(struct sfx *x, unsigned version, const struct sn_stream *st, unsigned n,
                       bool standby);
/* Remove them again (a torn-down transport names nothing). */
void sn_remove_transport(struct sfx *x, const struct sn_stream *st, unsigned n);

#endif
