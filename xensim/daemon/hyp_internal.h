/* hyp_internal.h - state shared by the daemon's grant-table (hyp_gnt.c) and
 * event-channel (hyp_evtchn.c) code and their server (hyp_server.c). Not an
 * interface for other modules: that is hyp.h.
 */
#ifndef XSIM_HYP_INTERNAL_H
#define XSIM_HYP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hyp_proto.h"
#include "evloop.h"
#include "msg.h"

struct hyp_conn;
struct hyp_obj;

/* One event channel port of a domain (Xen's struct evtchn plus the state
 * Linux's evtchn driver keeps for a port bound by a user handle). */
enum hyp_port_state {
    HYP_PORT_FREE = 0,
    HYP_PORT_UNBOUND,
    HYP_PORT_INTERDOMAIN,
    HYP_PORT_VIRQ,
};

struct hyp_port {
    uint8_t state;
    uint16_t remote_dom;  /* UNBOUND: who may bind; INTERDOMAIN: the peer */
    uint32_t remote_port; /* INTERDOMAIN */
    uint32_t virq;        /* VIRQ */
    unsigned notify_refs; /* unmap-notify records that will send on it (evtchn_get) */
    struct hyp_conn *h;   /* the xenevtchn handle it is bound to, or NULL */
    int bell1;            /* its doorbell's fd + 1 (hyp_proto.h), 0 while it has none */
};

/* A grant reference of a domain, mirrored for clients in the published table. */
struct hyp_gref {
    struct hyp_obj *obj; /* NULL: free */
    uint32_t page;
};

/* Handles (connections) a domain's processes may hold. Grants and ports are
 * counted per domain; a connection holds its own mappings and buffers, so
 * without a limit a domain could open handles until dom0 runs out. */
#define HYP_CONNS_PER_DOMAIN 1024u

struct hyp_dom {
    unsigned domid;
    bool dying;
    int lfd;
    struct hyp_conn *conns;
    unsigned nconns; /* at most HYP_CONNS_PER_DOMAIN */

    /* grant table */
    int gtab_fd;
    int gtab_ro_fd;
    struct hyp_gtab_entry *gtab; /* HYP_NR_GRANTS entries, read-write mapping */
    struct hyp_gref *grefs;      /* HYP_NR_GRANTS, allocated on first share */
    uint32_t next_ref;
    unsigned nr_shared; /* grants alive, against the gntalloc limit */

    /* event channels */
    struct hyp_port *ports; /* HYP_NR_PORTS, allocated on first bind */
    uint32_t virq_port[32];
};

struct hyp_map;

struct hyp_conn {
    struct hyp_dom *dom;
    int fd;
    uint32_t kind; /* enum hyp_kind, 0 before HYP_HELLO */
    bool leader;   /* the peer is the domain's main process: its death is the domain's */
    bool bye;      /* HYP_BYE came: the end is an orderly close */
    bool dead;     /* close after the current message */
    struct hyp_conn *prev, *next;

    /* xengnttab */
    struct hyp_map *maps;
    uint64_t mapped;
    uint32_t max_grants;
    uint32_t next_map_id;

    /* xengntshr */
    struct hyp_obj *objs;

    /* xenevtchn */
    int evfd;              /* the event socket: closed to tell the library we are gone */
    uint32_t *gen;         /* HYP_NR_PORTS generation counts, shared read-only with it */
    uint32_t restrict_dom; /* HYP_NONE: unrestricted */
};

extern struct evloop *hyp_loop;

/* The domain while it exists for the hypervisor (listened on, not destroyed). */
struct hyp_dom *hyp_dom_find(unsigned domid);
/* Whether a process of d dying, or an unmap, may still perform unmap-notify. */
bool hyp_dom_live(const struct hyp_dom *d);

/* Reply to request h on c. A reply that cannot be sent marks c dead. */
void hyp_reply(struct hyp_conn *c, const struct xsim_hdr *h, int err, const void *body, size_t len,
               const int *fds, unsigned nfds);
void hyp_close_fds(int *fds, unsigned nfds);
void hyp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* hyp_gnt.c */
int hyp_gnt_dom_init(struct hyp_dom *d);
void hyp_gnt_dom_fini(struct hyp_dom *d);
void hyp_gnt_dispatch(struct hyp_conn *c, const struct xsim_hdr *h, const void *body, int *fds,
                      unsigned nfds);
void hyp_gnt_conn_close(struct hyp_conn *c, bool notify);
void hyp_gnt_set_limit(unsigned limit);

/* hyp_evtchn.c */
/* Take the event socket; on success *genfd is the generation page to pass. */
int hyp_evt_conn_open(struct hyp_conn *c, int evfd, int *genfd);
void hyp_evt_dispatch(struct hyp_conn *c, const struct xsim_hdr *h, const void *body, int *fds,
                      unsigned nfds);
void hyp_evt_conn_close(struct hyp_conn *c);
void hyp_evt_dom_fini(struct hyp_dom *d);
/* Take a reference on local port of d for an unmap notification (Linux's
 * evtchn_get): the port stays open until the notification has been sent. */
int hyp_evt_notify_get(struct hyp_dom *d, uint32_t port);
/* Send on the port if send, and drop the reference. */
void hyp_evt_notify_put(struct hyp_dom *d, uint32_t port, bool send);
/* A global virq for dom0 (VIRQ_DOM_EXC). */
void hyp_evt_raise_virq(unsigned virq);

#endif
