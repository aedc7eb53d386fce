/* sf_engine.h - the journal-based shadow frontend engine, for classes
 * whose requests are replayed one by one (the disk): one thread and one
 * poll loop per device that owns the journal (sf_journal.h) and the
 * connection driver (sf_conn.h: handshake, watches, recovery sequence), and
 * drives a device class through its ops table. Callers (any number of
 * threads) submit a request as a list of journal entries and block until it
 * is done; while a recovery runs their requests are held (bounded:
 * max_held) and replayed after it, so that they see a pause, never an
 * error.
 *
 * The class knows its ring and its protocol keys; the engine knows neither.
 * Data flows one way: the class copies responses out of its ring and hands
 * them over (harvest); the engine validates each against the journal and
 * retires it (complete). All class ops run on the engine thread.
 *
 * A class that holds a second transport (the four standby ops) gets a hot
 * standby (sf_conn.h; schema.md, "The hot standby's connection"): the
 * engine keeps what the standby's connect reported, and at a promotion does
 * what it does after any reconnect - that connection's limits, then the
 * replay of the journal in order - on the transport the class swapped in.
 *
 * The fence (sf_fence.h; schema.md, FE/shadow/fenced): at a fault the engine
 * records what the failed backend may still write to storage (its
 * outstanding writes, the acknowledged ones it had not flushed); on the next
 * backend, in another domain, every write that overlaps them - replayed or
 * new - is held until FE/shadow/fenced passes the generation that backend
 * served at or its domain is gone, and then issued in order. Reads and other
 * writes go on; the recovery ends when only what waits for the fence is left.
 */
#ifndef SF_ENGINE_H
#define SF_ENGINE_H

#include "sf_conn.h"
#include "sf_journal.h"
#include "sf_log.h"
#include "sf_recovery.h"
#include "sf_validate.h"
#include "sf_xenbus.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sf_engine;

/* What a class reports about a new connection. */
struct sf_conn_info {
    uint32_t nslots;   /* requests the ring holds at once */
    bool write_cache;  /* completed changes are durable only after a flush */
    uint64_t max_data; /* longest SFJ_DATA entry it can issue now (bytes) */
};

#define SF_CONN_MISMATCH 1 /* connect(): not the device we had */

/* A response as copied out of the ring, not yet checked. */
struct sf_rsp {
    uint64_t id;
    unsigned op;
    int status;
};

struct sf_class_ops {
    const char *name;
    uint32_t flush_op; /* class op code for an SFJ_FLUSH entry the engine makes */
    /* The backend is in InitWait: set up the transport (share rings, bind
     * event channels) for the backend in x, write the transport keys.
     * 0, or -1 (logged by the class; the engine retries). */
    int (*setup)(void *cls, struct sfx *x);
    /* The backend is Connected: read its device properties. first is true
     * for the very first connection. Returns 0 with *conn filled, or
     * SF_CONN_MISMATCH (a different device: fatal), or -1 (unusable now). */
    int (*connect)(void *cls, struct sfx *x, bool first, struct sf_conn_info *conn);
    /* Drop the transport: unshare every page, unbind, remove the transport
     * keys. Never touches the old pages again. Safe to call when down. */
    void (*teardown)(void *cls, struct sfx *x);
    /* fd to poll while set up (event channel), or -1. */
    int (*fd)(void *cls);
    /* Put one entry on the ring (see sfj_issue_fn). */
    int (*issue)(void *cls, struct sfj_entry *e, int *status);
    /* Make issued requests visible to the backend and notify it. */
    void (*kick)(void *cls);
    /* Copy up to max responses out of the ring into rsp, in ring order;
     * returns how many (0: none now), or -1 with why when the ring itself
     * is impossible (its producer index). Checks nothing else and touches
     * no entry. event: fd() was readable (acknowledge it). */
    int (*harvest)(void *cls, bool event, struct sf_rsp *rsp, unsigned max, char *why, size_t len);
    /* A response the engine has validated against e: finish the class's
     * side (read data out, pages back). Returns the entry's status: 0 or an
     * errno value. */
    int (*complete)(void *cls, struct sfj_entry *e, int status);
    /* One-line description of an entry, for logs. */
    void (*describe)(void *cls, const struct sfj_entry *e, char *buf, size_t len);
    const struct sfv_rules *rules;

    /* Optional, all four or none: a hot standby's transport, beside the
     * live one. Set it up for the standby's backend in sx (in InitWait):
     * share its ring and pages with sx->be_id, write the transport keys
     * into sx->fe (the slot). 0 or -1 (logged by the class; retried). */
    int (*standby_setup)(void *cls, struct sfx *sx);
    /* Its backend is Connected: read and check what it offers as connect
     * does (SF_CONN_MISMATCH: another disk; -1: retried) and fill *conn for
     * the promotion. Nothing is ever issued on it before promote. */
    int (*standby_connect)(void *cls, struct sfx *sx, struct sf_conn_info *conn);
    /* Drop it (its keys removed from sx's dir); safe when there is none. */
    void (*standby_teardown)(void *cls, struct sfx *sx);
    /* The live transport is torn down: the standby's becomes the live one
     * (fd() names its event channel from now on). 0, or -1 if there is no
     * connected standby transport. */
    int (*promote)(void *cls);
    /* Optional, with the standby's: as sfc_ops.forget - the keys a
     * teardown at a hot switch (sf_engine_switching) left in x's dir,
     * removed the turn after the switch. */
    void (*forget)(void *cls, struct sfx *x);

    /* Optional: a bounded step of deferred work, after the turn's requests
     * are on the ring (a failed connection's pages released a chunk at a
     * time, so that a recovery does not wait for them). true while more
     * remains: the next turn does not wait in poll. */
    bool (*background)(void *cls);
};

struct sf_engine_config {
    const char *device;          /* the device dir (relative to the domain home) */
    unsigned deadline_ms;        /* a request outstanding this long: the backend hangs */
    unsigned max_held;           /* caller requests accepted and not done, at most */
    uint64_t max_retained;       /* bytes of acknowledged, unflushed changes kept */
    unsigned connect_timeout_ms; /* sf_engine_start waits this long (0: forever) */
    /* Keep no acknowledged change for replay, even with a write cache (the
     * shadow's cost, for benchmarks: a dying volatile cache then loses
     * acknowledged writes). Outstanding requests are still replayed. */
    bool no_retain;
    /* The application table's restart-only column (tests/campaign): the
     * frontend as a stock driver that restarts with its backend. At a fault
     * every request outstanding or queued fails with EIO, requests made
     * while no backend is connected fail at once with EIO, and a new backend
     * serves only new requests: nothing is replayed or retained (implies
     * no_retain). Detection and reconnection run as with the shadow. */
    bool restart_only;
    void (*log)(enum sf_log_level level, const char *line);
};

/* A new engine for a class instance; nothing runs yet. 0 or -1 (errno). */
int sf_engine_new(const struct sf_class_ops *ops, void *cls, const struct sf_engine_config *cfg,
                  struct sf_engine **out);
/* Connect to xenstore, start the thread, wait for the first connection.
 * 0, or -1 with errno (ETIMEDOUT, or EIO if the device failed). */
int sf_engine_start(struct sf_engine *eng);
/* Stop (flushing what is retained, within the deadline), tear down, free.
 * NULL-safe; safe on an engine that never started. */
void sf_engine_free(struct sf_engine *eng);

/* Submit the n entries linked through their q member on list (in order) as
 * one request and wait for all of them. Returns 0 or an errno value. The
 * entries belong to the engine from here on. */
int sf_engine_run(struct sf_engine *eng, struct sf_link *list);

enum sf_state sf_engine_state(struct sf_engine *eng);
/* Recoveries completed so far. */
uint64_t sf_engine_recoveries(struct sf_engine *eng);
/* For the class, on the engine thread: a hot switch is under way
 * (sfc.switching: its teardown may leave its keys for forget). */
bool sf_engine_switching(const struct sf_engine *eng);

/* For the class, on the engine thread: a line in the device's log. */
void sf_engine_log(struct sf_engine *eng, enum sf_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
