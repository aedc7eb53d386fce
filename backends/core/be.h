/* be.h - the shared core of Understudy's userspace PV backends.
 *
 * One process serves one device: the backend dir given on the command line,
 * /local/domain/<self>/backend/<type>/<fe-domid>/<devid>. The core runs the
 * xenbus backend state machine, maps the frontend's rings, binds their event
 * channels, publishes the responses a class writes (with the fault layer,
 * be_fault.c, on that path) and owns the event loop; a device class
 * (blkback, netback...) registers an ops table and does the rest. The core
 * knows no class.
 *
 * Errors: functions return -1 (or NULL) with errno; class callbacks that fail
 * call be_error() first, so the reason reaches both the log and the store.
 */
#ifndef BE_H
#define BE_H

#include "be_inject.h"
#include "be_log.h"
#include "be_loop.h"
#include "xen_barriers.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>

struct be_dev;

/* Pages in one ring at most (ring-page-order 4). */
#define BE_RING_MAX_PAGES 16
/* Rings (queues) per device at most. */
#define BE_MAX_RINGS 16

/* Publications of responses the fault layer holds back per ring ("slow"):
 * each carries at least one response, so as many as the largest ring holds
 * (512: blkif's 16 pages) means none is ever merged into another. */
#define BE_MAX_DELAYS 512u

struct be_ring;
typedef void be_ring_cb(struct be_dev *be, struct be_ring *r, void *opaque);

/* A publication held back by "slow": responses up to idx, due at due_ms. */
struct be_delay {
    RING_IDX idx;
    uint64_t due_ms;
};

/* One shared ring mapped from the frontend, and its event channel. A zeroed
 * struct is "not mapped"; be_ring_unmap() returns it to that. The fields
 * after opaque are the core's own. */
struct be_ring {
    void *sring; /* the mapped pages, NULL when not mapped */
    unsigned nr_pages;
    bool bound;
    evtchn_port_t port;        /* local port, while bound */
    evtchn_port_t remote_port; /* the frontend's port */
    be_ring_cb *cb;
    void *opaque;

    struct be_ring *chan; /* notify on this ring's channel instead (be_ring_notify_via) */
    RING_IDX rsp_start;   /* rsp_prod found in the page when it was mapped */
    RING_IDX handed;      /* responses handed to be_ring_publish so far */
    struct be_delay delay[BE_MAX_DELAYS]; /* "slow": publications not yet due */
    unsigned ndelay;
};

/* How the fault layer asks a class to corrupt one response. */
enum be_corrupt {
    BE_CORRUPT_ID,     /* an id the frontend never used */
    BE_CORRUPT_STATUS, /* a status no backend can send */
};

struct be_class_ops {
    size_t size;      /* sizeof(struct be_class_ops); the table only grows at the end */
    const char *prog; /* program name, the log prefix: "blkback" */
    const char *type; /* device type in the backend path: "vbd" */
    /* Toolstack keys of the backend dir; a change to one retries a failed setup. */
    const char *const *config_keys;
    /* Read the toolstack's keys, open the device. 0, or -1 after be_error(). */
    int (*setup)(struct be_dev *be);
    /* Write features and device properties (inside t); before each InitWait. */
    int (*publish)(struct be_dev *be, xs_transaction_t t);
    /* The frontend is ready: read its transport keys, map rings (be_ring_map),
     * bind them (be_ring_bind). 0, or -1 after be_error(); the core then calls
     * disconnect to undo whatever was done. */
    int (*connect)(struct be_dev *be);
    /* End the connection: finish or drop I/O, unmap everything. Must be safe
     * on a half-made connection. */
    void (*disconnect)(struct be_dev *be);
    /* Told of a new injected fault once the core's fault layer has taken it
     * (a crash never gets here). May be NULL: the fault layer needs nothing
     * from a class but corrupt. */
    void (*fault)(struct be_dev *be, const struct be_fault *f);
    /* Close what setup opened. Must be safe after a failed setup. */
    void (*teardown)(struct be_dev *be);
    /* The fault layer's one class hook: corrupt the response just written in
     * slot idx of r (handed to be_ring_publish, not yet visible), as how
     * says, and log it. False if that slot holds no response to corrupt
     * (netif's extra-info and NULL slots): the next one is taken instead.
     * May be NULL: no response is ever corrupted. */
    bool (*corrupt)(struct be_dev *be, struct be_ring *r, RING_IDX idx, enum be_corrupt how);
};

/* Parse argv (--backend PATH), serve the device until its backend dir is
 * removed or a SIGTERM/SIGINT arrives. Returns the process exit status. */
int be_main(const struct be_class_ops *ops, void *priv, int argc, char **argv);

void *be_priv(struct be_dev *be);
struct xs_handle *be_xs(struct be_dev *be);
xengnttab_handle *be_gnttab(struct be_dev *be);
struct be_loop *be_loop_of(struct be_dev *be);
struct be_log *be_logger(struct be_dev *be);
const char *be_path(struct be_dev *be);    /* the backend dir */
const char *be_fe_path(struct be_dev *be); /* the frontend dir */
unsigned be_fe_domid(struct be_dev *be);
unsigned be_devid(struct be_dev *be);

#define BE_LOG(be, ...)    be_log_line(be_logger(be), __VA_ARGS__)
#define BE_LOG_RL(be, ...) be_log_limited(be_logger(be), __VA_ARGS__)

/* Log an error and publish it as the backend dir's "error" node,
 * "<errno> <message>" (as Linux's xenbus_dev_error formats it). */
void be_error(struct be_dev *be, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A connected frontend broke the protocol: be_error(), then state Closing.
 * The class stops serving what broke; the core disconnects once the
 * frontend closes or reconnects. */
void be_fail(struct be_dev *be, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Read the frontend's unsigned decimal fe_path/key in [0, max], dflt when
 * absent (a feature the frontend does not name). 0, or -1 after be_error(). */
int be_read_fe_u64(struct be_dev *be, const char *key, uint64_t max, uint64_t dflt, uint64_t *out);

/* Map nr_pages ring pages granted by the frontend, refs read from dir:
 * "<refkey>" when !indexed (a one-page ring), else "<refkey>0".."<refkey>N-1".
 * 0, or -1 after be_error(). */
int be_ring_map(struct be_dev *be, const char *dir, const char *refkey, unsigned nr_pages,
                bool indexed, struct be_ring *r);
/* Bind the frontend's port read from dir/key to r; cb runs on each event.
 * 0, or -1 after be_error(). */
int be_ring_bind(struct be_dev *be, const char *dir, const char *key, struct be_ring *r,
                 be_ring_cb *cb, void *opaque);
/* Unbind and unmap; safe on a zeroed or half-made ring. */
void be_ring_unmap(struct be_dev *be, struct be_ring *r);
/* Send an event to the frontend on r's channel. */
void be_ring_notify(struct be_dev *be, struct be_ring *r);
/* r has no channel of its own: its events go out on chan's (netif's rx ring
 * with one event channel for both). */
void be_ring_notify_via(struct be_ring *r, struct be_ring *chan);

/* The shared page's indexes, for the class's back ring (xen/io/ring.h; the
 * header is the same for every ring type). Every barrier a backend needs is
 * in these and in be_ring_publish. */
/* The frontend's req_prod; requests up to it may be copied out after this. */
RING_IDX be_ring_req_prod(const struct be_ring *r);
/* Ask for an event once req_prod passes at-1, and read req_prod again after
 * that (a request posted meanwhile is either seen here or notified). */
RING_IDX be_ring_req_event(struct be_ring *r, RING_IDX at);
/* Is a frontend's req_prod possible, given what the back ring has consumed
 * (req_cons) and answered (rsp_prod_pvt)? At most a ring ahead of both:
 * xen/io/ring.h's RING_REQUEST_PROD_OVERFLOW checks the answered side only,
 * and a req_prod moved back behind req_cons by less than a ring passes it
 * while prod - req_cons wraps to four billion requests. */
static inline bool be_ring_prod_ok(RING_IDX prod, RING_IDX req_cons, RING_IDX rsp_prod_pvt,
                                   unsigned size)
{
    return prod - rsp_prod_pvt <= size && prod - req_cons <= size;
}
/* Where the class's back ring starts (BACK_RING_ATTACH): the rsp_prod found
 * in the page when it was mapped, read once. */
RING_IDX be_ring_attach_at(const struct be_ring *r);

/* Publish the responses written into r up to rsp_prod_pvt: make them
 * visible and notify the frontend if it asked. The only way a class
 * publishes: the fault layer (be_fault.c) sits here and may corrupt the new
 * responses (ops->corrupt) or hold the publication back ("slow"). */
void be_ring_publish(struct be_dev *be, struct be_ring *r, RING_IDX rsp_prod_pvt);

/* The fault layer's hang gate: while true the class takes no requests (and
 * ring events do not reach it); when the hang ends, every bound ring's
 * callback runs as if an event had come. */
bool be_fault_hung(struct be_dev *be);

#endif
