/* sf_conn.h - the connection driver of a shadow frontend, one for every
 * class: the xenbus handshake with the backend, the watches (the device's
 * shadow/generation, the backend dir, @releaseDomain), detection of a
 * backend that went away or was rewired, the fault / fail / replayed
 * sequence of the recovery state machine (sf_recovery.h), and what the
 * frontend publishes: its XenbusState and its shadow/ keys.
 *
 * A class brings its transport (rings, grants, event channels, protocol
 * keys), its restore step and what it holds across a recovery through
 * sfc_ops; the driver knows none of them. A class is a journal-based engine
 * (sf_engine.h, the disk), or a loop of its own (the NIC; a PCM whose clock
 * keeps running and that only reopens its streams). It owns no thread and no loop: the owner polls
 * the fds from sfc_pollfds beside its own (event channels, a TAP, a PCM's descriptors, its timers),
 * with at most sfc_timeout, and calls sfc_step once a turn. Everything runs on the owner's thread.
 *
 * One behaviour for every class (README.md, "The connection driver"):
 *   - @releaseDomain is watched: a backend domain that is no longer
 *     introduced is a fault (backend-vanished) as soon as it is released;
 *   - a handshake the backend breaks off, a fault before the first
 *     connection, and a backend that connects but is unusable all write
 *     Closed and retry after SETUP_RETRY_MS;
 *   - the frontend is Connected once the backend is; before that, once its
 *     transport keys are written, it writes the class's setup_state;
 *   - with a hot standby (a class with the standby ops), a second connection
 *     is made in the slot FE/shadow/standby names and held idle; when the
 *     toolstack points FE/backend at it, the device switches to it without a
 *     handshake (promote) and replays.
 */
#ifndef SF_CONN_H
#define SF_CONN_H

#include "sf_log.h"
#include "sf_recovery.h"
#include "sf_xenbus.h"

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SFC_NFDS     3 /* pollfds the driver needs (sfc_pollfds) */
#define SFC_MISMATCH 1 /* setup/connect: not the device we had; it fails */

enum sfc_phase {
    SFC_DOWN = 0, /* no transport */
    SFC_SETUP,    /* transport keys written, waiting for the backend's Connected */
    SFC_UP,       /* connected: the class may use its transport */
};

struct sfc_ops {
    /* The XenbusState written once the transport keys are: Initialised
     * (blkif) or Connected (netif: Linux's netback connects only on it). */
    int setup_state;
    /* The backend in x is in InitWait: set up the transport for its domain
     * and write the transport keys. 0; -1 (logged by the class; retried);
     * SFC_MISMATCH with why filled (the device fails). */
    int (*setup)(void *cls, struct sfx *x, char *why, size_t len);
    /* The backend is Connected: read what it offers, check it is the same
     * device, restore what the class restores on a new backend. first: the
     * very first connection. 0 with what (for the log line); -1 (unusable
     * now, retried); SFC_MISMATCH with the reason in what (it fails). */
    int (*connect)(void *cls, struct sfx *x, bool first, char *what, size_t len);
    /* Drop the transport: unshare every page, unbind, remove the transport
     * keys; never touch the old pages again. Safe when down. */
    void (*teardown)(void *cls, struct sfx *x);
    /* Optional. A fault, before teardown (the old pages are still ours to
     * read): take back what is to be replayed, hold the guest side (or keep
     * its clock running). held: what is held now, for the log. */
    void (*isolate)(void *cls, char *held, size_t len);
    /* Optional. The device failed for good (after teardown): fail or drop
     * what is held. what: what the guest sees from now on, for the log. */
    void (*fail)(void *cls, char *what, size_t len);
    /* Optional (none: nothing is ever outstanding, no deadline). The issue
     * time of the oldest request the backend has not answered; false if
     * none. */
    bool (*oldest)(void *cls, uint64_t *since);
    /* Optional: the recovery state (rec.state) may have changed. */
    void (*state_changed)(void *cls);
    /* Optional: FE/shadow/fenced may have changed, or a domain was released
     * (@releaseDomain): a class holding what a failed backend may still
     * write looks again (sfx_read_fenced, sfc_domain_gone). */
    void (*fence_news)(void *cls);

    /* Optional, all four or none: the hot standby (schema.md, "The hot
     * standby's connection"). A class without them holds no second
     * connection, and a promotion reads to it as a rewire (a handshake in
     * the slot). A second transport, in the slot sx->fe, to the standby's
     * backend sx->be: set up and connected like the first, never used until
     * promote. Set up for the backend in InitWait: as setup, keys into the
     * slot. */
    int (*standby_setup)(void *cls, struct sfx *sx, char *why, size_t len);
    /* The standby's backend is Connected: read and check what it offers
     * (the same device) and keep it for promote; issue nothing. 0 with
     * what; -1 (retried); SFC_MISMATCH (dropped until the slot changes). */
    int (*standby_connect)(void *cls, struct sfx *sx, char *what, size_t len);
    /* Drop the standby transport (its keys removed from the slot); safe
     * when there is none. */
    void (*standby_teardown)(void *cls, struct sfx *sx);
    /* The failed transport is gone (isolate and teardown ran): the standby
     * transport becomes the live one, x its link now (in the slot), and what
     * connect restores on a new backend is restored. As connect returns. */
    int (*promote)(void *cls, struct sfx *x, char *what, size_t len);
    /* Optional, with the standby ops: a teardown at a hot switch (switching
     * set) may leave the failed connection's transport keys in its dir -
     * each removal a round trip the switch need not wait for. The driver
     * calls forget with x linked to that dir at the loop's next turn, once
     * the class has put its replay on the new transport, or before it sets
     * up or tears down anything else: remove them there. */
    void (*forget)(void *cls, struct sfx *x);
};

struct sfc_config {
    const char *device;   /* the device dir (relative to the domain home) */
    unsigned deadline_ms; /* a request unanswered this long: the backend hangs */
    unsigned tick_ms;     /* turns while requests are outstanding (0: 50 ms); a class
                             whose backend is not asked to notify every response
                             sets its deadline: an extra turn costs a wakeup */
    sf_log_sink *log;     /* where lines go (without the device: the sink adds it) */
    void *log_arg;
};

struct sfc {
    /* read-only to the class */
    struct sfx x;
    struct sf_recovery rec;
    enum sfc_phase phase;
    /* the driver's */
    const struct sfc_ops *ops;
    void *cls;
    struct sfc_config cfg;
    char device[SFX_PATH_MAX];
    bool x_open;
    struct xs_handle *xs_rel; /* a second handle, for @releaseDomain */
    uint64_t gen;
    /* A hot switch went on FE/backend alone and read the generation before
     * the promotion's had landed: the next one naming this backend is the
     * promotion's own, not a rewiring (sf_conn.c, hot_switch_first). */
    bool gen_pending;
    uint64_t hs_since, hs_retry_at;
    unsigned hs_timeouts; /* handshakes timed out in a row (each waits twice as long) */
    bool asked_close;
    uint64_t last_alive; /* the backend's last valid response */
    /* the hot standby's idle connection (ops->promote set) */
    struct sfx sx;
    bool sx_open;
    enum sfc_phase sb_phase;
    char sb_slot[16]; /* the slot it is in ("" none) */
    bool sb_refused;  /* standby_connect said another device: until the slot changes */
    uint64_t sb_since, sb_retry_at;
    uint64_t promotions; /* recoveries that switched to the standby */
    /* A hot switch from a live connection is under way (sf_conn.c,
     * switch_from_live): the failed transport's teardown may leave what
     * costs round trips (unsharing; its xenstore keys, for ops->forget)
     * until the switch is done. */
    bool switching;
    /* ... and what it left for the loop's next turns (sf_conn.c,
     * switch_chore: one round trip a turn, the class's data path between
     * them), in their order: the report, the recovery's end (live_left,
     * below), the promoted backend's watch, the standby slot's xenstore
     * connection to close, the old dir's state, shadow/state recovering
     * (not once live) ... */
    bool watch_left; /* the promoted backend's watch (sfx_read_backend) */
    struct xs_handle *sx_closing;
    bool switch_closed_left;
    bool switch_report;
    bool switch_recovering;
    char switch_dir[SFX_PATH_MAX];
    /* ... and the keys ops->forget is to remove from switch_dir (forget_now),
     * last. live_left: shadow/recoveries, last-recovery and state live, from
     * sfc_replayed, second (shadowd's recovery ends when it reads live). */
    bool forget_left;
    bool live_left;
    /* None of them before the replay is done (or CHORE_HOLD_MS after the
     * switch): each blocks the loop, and so the replay's first answers. */
    uint64_t switch_ms;
    char chores_done[160]; /* each chore's time, for the log (switch_chore) */
    uint64_t chores_since;
};

/* Connect to xenstore and set the watches (logged on failure). 0 or -1. */
int sfc_open(struct sfc *c, const struct sfc_ops *ops, void *cls, const struct sfc_config *cfg);
/* NULL-safe, and safe on a zeroed or half-opened sfc. */
void sfc_close(struct sfc *c);

/* Start: read the generation and the backend, write Initialising. */
void sfc_begin(struct sfc *c);
/* Stop: tear the transport down, write Closed. */
void sfc_end(struct sfc *c);

/* The generation of FE/shadow/generation the driver has acted on. */
uint64_t sfc_generation(const struct sfc *c);
/* Is domain domid gone (no longer introduced)? 1 gone, 0 not, -1 cannot
 * tell (no second handle, or the guest may not ask: an unprivileged guest
 * may not on xensim or Xen's C xenstored). */
int sfc_domain_gone(const struct sfc *c, unsigned domid);
/* The class found the standby's idle transport broken (a response it never
 * asked for): drop it and set it up afresh, as when its backend goes away;
 * the device's own connection is not touched. Logged. */
void sfc_standby_fault(struct sfc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fill p[0..SFC_NFDS) with the driver's fds (POLLIN; -1 where none). */
void sfc_pollfds(const struct sfc *c, struct pollfd *p);
/* One turn: watch events (generation, backend dir, @releaseDomain), then
 * the handshake while not connected. */
void sfc_step(struct sfc *c, uint64_t now);
/* Poll timeout (ms): the handshake's tick while not connected, the
 * deadline of the oldest unanswered request (at most a short tick), or
 * idle_ms when nothing is outstanding. */
int sfc_timeout(const struct sfc *c, uint64_t now, unsigned idle_ms);
/* The oldest unanswered request is past the deadline: true with its age. */
bool sfc_overdue(const struct sfc *c, uint64_t now, uint64_t *age);
/* A fault seen at now: its first sign, where the recovery's detect phase
 * starts - the oldest request still unanswered (or the backend's last answer
 * if that came later); now if nothing was outstanding (an idle device's last
 * answer says nothing of when its backend failed). */
uint64_t sfc_first_sign(const struct sfc *c, uint64_t now);

/* A valid response arrived: the backend is alive. */
void sfc_alive(struct sfc *c, uint64_t now);
/* The backend misbehaved, hangs or went away: isolate, tear down, report
 * (shadow/report, shadow/state=recovering) and wait for a backend; a fault
 * during a recovery folds into it. */
void sfc_fault(struct sfc *c, enum sf_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Not the device we had: FAILED for good (shadow/state=failed). */
void sfc_fail(struct sfc *c, const char *why);
/* Connected again and the class's replay is in progress. */
bool sfc_replaying(const struct sfc *c);
/* The class has replayed and restored everything: the recovery ends
 * (shadow/state=live, shadow/recoveries, shadow/last-recovery). extra is
 * appended to the log line. A class with nothing to replay (its restore
 * done in connect) calls it on the turn sfc_replaying() is first true. */
void sfc_replayed(struct sfc *c, uint64_t now, const char *extra);

void sfc_log(const struct sfc *c, enum sf_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
