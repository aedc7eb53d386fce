/* nf_dev.h - the shadow netfront: one NIC, its TAP, its shadow, and its
 * connections, as a class of the core's connection driver (sf_conn.h: the
 * handshake, detection and the recovery sequence are the core's). What is
 * the NIC's own: the TAP and its carrier, tx held while there is no backend
 * and the replay of unanswered frames, the multicast list and MTU restore,
 * rx delivery. Single-threaded: nf_dev_run owns one poll loop.
 */
#ifndef NF_DEV_H
#define NF_DEV_H

#include "nf_conn.h"
#include "nf_link.h"
#include "nf_neigh.h"
#include "nf_offload.h"
#include "nf_probe.h"
#include "nf_shadow.h"
#include "nf_tap.h"
#include "nf_xenbus.h"
#include "sf_conn.h"

#include <stdbool.h>
#include <stdint.h>

struct nf_config {
    const char *device;   /* the frontend dir, e.g. device/vif/0 */
    const char *ifname;   /* the TAP's name */
    unsigned deadline_ms; /* a tx request unanswered this long: the backend hangs */
    unsigned max_held;    /* frames held while there is no backend */
    unsigned poll_ms;     /* how often the interface configuration is read */
    unsigned probe_ms;    /* tx idle this long: a liveness probe (nf_probe.h); 0: none */
    bool offloads;        /* checksum and GSO offloads where the backend has them */
    unsigned queues;      /* queues asked for (1..NF_MAX_QUEUES), as the backend allows */
    bool shadow;          /* off: a plain netfront, for measuring the shadow (README.md) */
    bool verbose;
};

struct nf_held {
    uint8_t *data;
    unsigned len;
};

struct nf_dev {
    struct nf_config cfg;
    uint8_t mac[6];
    struct sfc c; /* the connection driver: handshake, watches, recovery */
    struct nf_tap tap;
    xengntshr_handle *gs;
    xenevtchn_handle *xce;

    struct nf_link ln;         /* the live transport: one connection per queue */
    struct nf_link sb;         /* the hot standby's, held idle in its slot (nf_standby.h) */
    struct nf_link retired;    /* a failed transport, unshared in the background */
    uint64_t retired_at;       /* when it failed */
    unsigned retired_dom;      /* its backend's domain */
    struct nf_txcaps caps;     /* the tx offloads of the live transport */
    bool gso_bounded;          /* the TAP's GSO packets fit a tx request */
    bool warned_static;        /* logged that a static-only backend keeps filtering */
    struct nf_probe probe;     /* the liveness probe of an idle tx path */
    struct nf_neigh neigh;     /* the TAP's neighbour probe budget, raised while recovering */
    uint64_t neigh_restore_at; /* live again: when it goes back (0: not yet set) */
    bool link_kept;            /* isolated for a switch with the link up (nf_isolate) */
    /* A replay's own steps, ms since the restore (0: not yet): the held
     * frames all on the ring, the first tx and rx responses, the multicast
     * list answered - for the "recovered" line. */
    struct {
        uint64_t t0, held, tx, rx, mc;
    } rp;

    struct nf_shadow sh;      /* the guest's configuration, as last read */
    struct nf_shadow applied; /* the multicast list the backend has (its mc part) */
    uint64_t next_read;
    bool have_shadow;
    bool programmed; /* a first backend got the multicast list (shadow off: only it) */

    /* tx held while there is no backend: FIFO */
    struct nf_held *held;
    unsigned held_head, held_n;
    uint64_t held_bytes;
    /* at a fault: the frames the dead connection never answered */
    struct nf_held *unans; /* NF_TX_PAGES */
    unsigned n_unans;

    uint8_t *rdbuf; /* one frame read from the TAP (READ_MAX bytes) */
    char *mctext;   /* /proc/net/dev_mcast (NF_MCAST_TEXT_MAX bytes) */

    uint64_t tx_drop_held, tx_drop_big, tx_drop_off, rx_filtered, rx_tap_err, rx_drop_off;
    uint64_t sb_rx_dropped; /* frames a standby received before it was promoted */
    bool stop;
};

/* Open xenstore, Xen handles and the TAP. 0 or -1 (logged). */
int nf_dev_open(struct nf_dev *d, const struct nf_config *cfg);
/* The loop, until SIGTERM/SIGINT (via *stop set by the caller's handler
 * or signalfd sigfd). */
int nf_dev_run(struct nf_dev *d, int sigfd);
void nf_dev_close(struct nf_dev *d);

void nf_log(const struct nf_dev *d, bool verbose_only, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* For the class's own files (nf_standby.c). */
/* Negotiate with x's backend and share a transport with it (l): as the
 * connection driver's setup. 0; -1 (logged); SFC_MISMATCH with why. */
int nf_dev_share(struct nf_dev *d, struct nf_link *l, struct sfx *x, const char *role, char *why,
                 size_t len);
/* The live transport is to a new backend: its multicast list is empty. */
void nf_dev_new_backend(struct nf_dev *d);
/* The live transport's backend is Connected: offloads, carrier on, and what
 * the recovery restores (as sfc_ops.connect). */
int nf_dev_restore(struct nf_dev *d, struct sfx *x, bool first, char *what, size_t len);
/* Isolated for a switch with the link kept up (nf_isolate) and the switch
 * did not happen: the link goes down as for any outage. Nothing otherwise. */
void nf_dev_link_down(struct nf_dev *d);
/* The guest's MTU fits what l's backend takes (over a page: feature-sg). */
bool nf_dev_mtu_fits(const struct nf_dev *d, const struct nf_link *l);

#endif
