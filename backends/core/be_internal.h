/* be_internal.h - the core's device object, shared by the core's own files
 * (be_dev.c, be_ring.c, be_xenbus.c, be_main.c) and by nothing else.
 */
#ifndef BE_INTERNAL_H
#define BE_INTERNAL_H

#include "be.h"
#include "be_fault_mode.h"

#include <xentoollog.h>

/* The logger given to Xen's libraries (be_xtl.c). */
struct be_xtl {
    struct xentoollog_logger xtl; /* first: the libraries hand this back */
    struct be_log lg;             /* the device's tag, its own rate limit */
};

struct be_dev {
    const struct be_class_ops *ops;
    void *priv;
    struct be_loop *loop;
    struct xs_handle *xs;
    xengnttab_handle *gt;
    xenevtchn_handle *xce;
    int sigfd;
    struct be_log log;
    struct be_xtl xtl;

    char path[256];    /* backend dir */
    char fe_path[256]; /* frontend dir, from <path>/frontend */
    char fe_state_path[272];
    char inject_path[256];
    unsigned self, fe_domid, devid;

    int state;          /* the XenbusState we last wrote */
    bool set_up;        /* ops->setup succeeded; the device is open */
    bool connected;     /* ops->connect ran (even if it failed half-way) */
    bool stale;         /* started over an earlier incarnation: see be_xenbus.c */
    bool offline;       /* the toolstack asked for the device to close */
    bool error_maybe;   /* an error node may be in the dir (ours, or an earlier incarnation's) */
    unsigned fe_events; /* watch events on the frontend's state since it was watched */
    int fe_state;       /* the frontend state last acted on, -1 if none */
    uint64_t inject_seq;
    bool inject_known; /* inject_seq holds a seq seen already */
    int exit_code;

    struct be_ring *rings[BE_MAX_RINGS]; /* mapped rings: event dispatch, the fault layer */

    /* The fault layer (be_fault.c): the device's faults outlive connections. */
    struct be_fault_mode fm;
    uint64_t delay_timer; /* "slow": the next held publication due */
    uint64_t corrupted;   /* responses corrupted so far (alternates the kind) */
};

/* be_xtl.c: the logger for xengnttab_open and xenevtchn_open (after be->log is set). */
struct xentoollog_logger *be_xtl_init(struct be_dev *be);

/* be_xenbus.c */
int be_xenbus_start(struct be_dev *be);
void be_xenbus_watch_event(struct be_dev *be, const char *path, const char *token);
void be_xenbus_shutdown(struct be_dev *be);
int be_write_state(struct be_dev *be, int state);

/* be_ring.c */
void be_ring_dispatch(struct be_dev *be, evtchn_port_t port);
/* Make r's responses up to upto visible, notify if the frontend asked. */
void be_ring_expose(struct be_dev *be, struct be_ring *r, RING_IDX upto);
/* Run every bound ring's callback, as if each had had an event. */
void be_ring_kick_all(struct be_dev *be);

/* be_fault.c: the fault layer. */
/* A new injected fault other than crash. */
void be_fault_take(struct be_dev *be, const struct be_fault *f);
/* be_ring_publish's layer: corrupt, then publish now or when due. */
void be_fault_publish(struct be_dev *be, struct be_ring *r, RING_IDX upto);

#endif
