/* shadowd.h - the core of shadowd: driver domains, the devices they serve,
 * and the recovery of one domain. Class-blind: a device is a backend dir of
 * any type, its toolstack keys and its frontend dir.
 *
 * Modules: main.c (loop, signals), store.c (xenstore connection, watches),
 * record.c (recording devices), persist.c (state dir), detect.c (death,
 * heartbeat, reports), recover.c (the state machine), rewire.c (writing the
 * new backend dirs and the frontends in place), ctl.c/status.c/metrics.c
 * (the control and metrics sockets), standby.c (the warm standby). */
#ifndef SD_SHADOWD_H
#define SD_SHADOWD_H

#include "conf.h"
#include "drv.h"
#include "sd_text.h"

#include <stdbool.h>
#include <stdint.h>
#include <xenstore.h>

#define SD_MAX_KEYS      128  /* toolstack keys recorded per device */
#define SD_MAX_VALUE     4096 /* bytes of one recorded value */
#define SD_MAX_RESTARTS  64   /* restart times remembered for the budget */
#define SD_HISTORY       64   /* recoveries kept for `shadowctl history` */
#define SD_REWIRE_CHUNK  32   /* devices rewired per loop iteration */
#define SD_MAX_REPORTERS 16   /* distinct guests remembered for corroboration */

struct sd_kv {
    char *k; /* relative to the backend dir, e.g. "params" */
    char *v;
};

struct sd_dev {
    char type[32]; /* backend type: vbd, vif, ... */
    unsigned fe;   /* frontend domid */
    unsigned devid;
    char fe_path[160]; /* /local/domain/<fe>/device/<fetype>/<devid> */
    struct sd_kv *kv;  /* toolstack keys, sorted by k */
    unsigned nkv;
    uint64_t generation;            /* last FE/shadow/generation we wrote */
    char report[SD_REPORT_MAX + 1]; /* FE/shadow/report last looked at */
    /* ---- runtime, not persisted ---- */
    bool paired; /* BE/frontend and FE/backend agree: rewired on recovery */
    bool fe_watched;
    bool be_seen;    /* its backend dir exists in the current domain */
    bool report_due; /* a report event waits for report-interval */
    uint64_t last_report_ms;
    /* the reconnect of the recovery in progress */
    bool rewired, shadow_aware, reconnected;
    bool base_unknown; /* rewired by a shadowd that died before saving rec_base */
    bool gave_up;      /* its frontend said failed: not waited for */
    unsigned rewire_tries;
    uint64_t rec_base; /* FE/shadow/recoveries when rewired */
    char fe_last[128]; /* FE/shadow/last-recovery when reconnected */
};

enum sd_dstate {
    DS_UP = 0,     /* running; recording and detection active */
    DS_RECOVERING, /* see struct sd_recovery */
    DS_FAILED,     /* past the restart budget: left down, loudly */
};

enum sd_rkind { RK_START = 0, RK_FAILURE, RK_PLANNED };

enum sd_phase {
    PH_RESTART = 0, /* waiting out the delay, destroying, creating */
    PH_REWIRE,
    PH_RECONNECT,
};

struct sd_recovery {
    unsigned id; /* per domain, counts up */
    enum sd_rkind kind;
    enum sd_phase phase;
    char reason[200];
    unsigned old_domid, new_domid; /* 0: none */
    uint64_t t_evidence;           /* the first sign of the failure */
    uint64_t t_detect;             /* decided to recover */
    uint64_t t_restarted;          /* new domain created */
    uint64_t t_rewired;
    uint64_t next_try_ms; /* PH_RESTART: not before */
    unsigned attempts;    /* restarts made in this recovery */
    bool op_pending;      /* a driver create/destroy in flight */
    bool destroyed;       /* old domain destroyed (or gone) */
    unsigned rewire_next; /* index of the next device to rewire */
    uint64_t deadline;    /* PH_RECONNECT: give up waiting */
    bool warm;            /* the new domain is a promoted standby */
};

/* One finished recovery, for history and metrics. */
struct sd_hist {
    char domain[64];
    unsigned id;
    enum sd_rkind kind;
    bool ok;
    char reason[200];
    char outcome[160];
    unsigned old_domid, new_domid, attempts, devices, reconnected;
    uint64_t detect_ms, restart_ms, rewire_ms, reconnect_ms, total_ms;
    uint64_t wall; /* CLOCK_REALTIME seconds at the end */
    bool warm;     /* a standby was promoted */
};

struct sd_reporter {
    unsigned guest;
    uint64_t at;
};

/* The warm standby (standby.c): a second copy of the driver domain, booted
 * ahead under the other of the domain's two names, serving nothing. */
enum sd_sbstate {
    SB_OFF = 0, /* not configured */
    SB_NONE,    /* none now: one is created at next_try_ms, while the domain is up */
    SB_BOOTING, /* created; its agent's first heartbeat not seen yet */
    SB_READY,   /* heartbeat seen: promoted at the next failure */
    SB_FAILED,  /* past its restart budget: failures restart cold */
};

struct sd_standby {
    enum sd_sbstate state;
    unsigned domid; /* 0: none */
    unsigned watched_domid;
    char hb_path[96];
    char hb_value[40];
    uint64_t hb_change_ms, hb_start_ms, ready_ms;
    uint64_t next_try_ms;
    bool replacing;  /* the next create replaces a failed standby: counts for its budget */
    bool op_pending; /* a driver create/destroy in flight */
    uint64_t restarts[SD_MAX_RESTARTS];
    unsigned nrestarts;
    unsigned streak;
    char error[200];
    uint64_t n_promotions, n_replacements;
};

struct sd;
struct sd_dom;

/* What shadowd last wrote to one of its status keys (store.c). */
enum sd_pubkey {
    PUB_STATE = 0,
    PUB_DOMID,
    PUB_RECOVERIES,
    PUB_ERROR,
    PUB_LAST,
    PUB_STANDBY,
    PUB_STANDBY_DOMID,
    PUB_KEYS,
};
struct sd_pub {
    bool known, present;
    char value[200];
};

/* What a pending driver operation belongs to (the arg of drv.h's done). */
struct sd_opctx {
    struct sd_dom *d;
    bool standby;
};

struct sd_dom {
    struct sd *sd;
    unsigned idx;
    const struct sd_domconf *conf;
    const struct sd_drv_ops *ops;
    struct sd_drv *drv;
    unsigned domid; /* the current domain, 0 while none */
    enum sd_dstate state;
    char error[200];         /* why it is FAILED */
    char last_recovery[160]; /* USK_SD_LAST_RECOVERY of the last one */
    uint64_t up_since;
    struct sd_dev **devs;
    unsigned ndevs;
    bool devs_dirty; /* persist the records */
    bool scan_due;   /* rescan every backend dir */
    uint64_t next_scan_ms;
    /* heartbeat */
    char hb_path[96];
    char hb_value[40];
    bool hb_seen;
    uint64_t hb_change_ms, hb_start_ms;
    /* watches registered for domid */
    unsigned watched_domid;
    /* restarts, for the budget and the backoff */
    uint64_t restarts[SD_MAX_RESTARTS];
    unsigned nrestarts;
    unsigned streak; /* restarts since the domain was last stable */
    /* reports */
    struct sd_reporter reporters[SD_MAX_REPORTERS];
    unsigned nreporters;
    struct sd_reporter guest_triggers[SD_MAX_RESTARTS]; /* report-triggered recoveries */
    unsigned ntriggers;
    /* the recovery in progress (state DS_RECOVERING) */
    struct sd_recovery rec;
    unsigned next_rec_id;
    /* counters */
    uint64_t n_recoveries, n_failures, n_restarts, n_reports_accepted, n_reports_ignored;
    uint64_t n_detect[4]; /* by source: death, heartbeat, report, planned */
    uint64_t phase_sum[4], phase_count;
    bool persisted_rec;   /* a recovery file exists */
    bool startup_pending; /* the driver could not be asked yet */
    uint64_t startup_retry_ms;
    /* the domain's names: slot 0 is the config's name, slot 1 the standby's
     * "<name>.2"; slot says which one the serving domain has */
    unsigned slot;
    struct sd_standby sb;
    struct sd_opctx op_main, op_standby;
    struct sd_pub pub[PUB_KEYS];
};

struct sd {
    struct sd_conf *conf;
    struct xs_handle *xs;
    struct sd_dom *doms;
    unsigned ndoms;
    struct sd_drv *drv[SD_DRIVER_KINDS]; /* by enum sd_driver_kind */
    char boot_id[40];
    struct sd_hist hist[SD_HISTORY];
    unsigned nhist, hist_next;
    bool xs_lost;
    uint64_t started_ms;
};

/* Time and logging. */
uint64_t sd_now(void); /* CLOCK_MONOTONIC ms */
void sd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sd_dlog(const struct sd_dom *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- store.c ---- */
int sd_store_open(struct sd *sd); /* connect, register every watch */
void sd_store_close(struct sd *sd);
void sd_store_lost(struct sd *sd);         /* connection failed: reconnect later */
void sd_store_events(struct sd *sd);       /* read and dispatch queued watch events */
void sd_store_watch_dom(struct sd_dom *d); /* watches for d->domid (and drop old ones) */
void sd_store_watch_dev(struct sd_dom *d, struct sd_dev *v);
void sd_store_unwatch_dev(struct sd_dom *d, struct sd_dev *v);
/* Status keys under USK_SD_DIR/<name> (schema.md). */
void sd_store_publish(struct sd_dom *d);
void sd_store_watch_standby(struct sd_dom *d); /* the standby's heartbeat */

/* ---- record.c ---- */
void sd_record_scan(struct sd_dom *d);
void sd_record_be_event(struct sd_dom *d, const char *path);
void sd_record_fe_check(struct sd_dom *d, struct sd_dev *v);
struct sd_dev *sd_record_find(struct sd_dom *d, const char *type, unsigned fe, unsigned devid);
struct sd_dev *sd_record_add(struct sd_dom *d, const char *type, unsigned fe, unsigned devid);
void sd_record_drop(struct sd_dom *d, struct sd_dev *v, const char *why);
void sd_dev_free(struct sd_dev *v);
int sd_dev_set_kv(struct sd_dev *v, struct sd_kv *kv, unsigned n); /* takes kv */
bool sd_key_published(const struct sd *sd, const char *key);
void sd_be_path(char *buf, size_t len, unsigned drv, const struct sd_dev *v);
/* Distinct guests among paired devices; *only is set when there is one. */
unsigned sd_record_guests(const struct sd_dom *d, unsigned *only);

/* ---- persist.c ---- */
int sd_persist_init(struct sd *sd);
int sd_persist_save_devs(struct sd_dom *d);
int sd_persist_load_devs(struct sd_dom *d);
int sd_persist_save_rec(struct sd_dom *d);
int sd_persist_load_rec(struct sd_dom *d, bool *found);
void sd_persist_drop_rec(struct sd_dom *d);
void sd_persist_history_append(struct sd *sd, const struct sd_hist *h);
void sd_persist_history_load(struct sd *sd);

/* ---- detect.c ---- */
void sd_detect_release(struct sd *sd);                 /* @releaseDomain fired */
void sd_detect_changed(struct sd *sd, unsigned domid); /* a driver says domid changed */
void sd_detect_heartbeat(struct sd_dom *d);            /* the heartbeat key changed */
void sd_detect_report(struct sd_dom *d, struct sd_dev *v);
void sd_detect_tick(struct sd_dom *d, uint64_t now);
/* Check d->domid with the driver; start a recovery if it is dead. */
void sd_detect_check_dom(struct sd_dom *d);
const char *sd_reason_name(int reason); /* SD_SHUT_* as a word */

/* ---- recover.c ---- */
enum sd_source { SRC_DEATH = 0, SRC_HEARTBEAT, SRC_REPORT, SRC_PLANNED };
void sd_recover_start(struct sd_dom *d, enum sd_rkind kind, enum sd_source src,
                      uint64_t evidence_ms, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void sd_recover_tick(struct sd_dom *d, uint64_t now);
void sd_recover_done_op(struct sd_dom *d, enum sd_drv_op op, int rc, unsigned domid,
                        const char *err);
void sd_recover_fe_event(struct sd_dom *d, struct sd_dev *v);
/* Resume a persisted recovery, or adopt/start the domain (startup). */
void sd_recover_startup(struct sd_dom *d);
/* The budget: may d restart now? */
bool sd_budget_ok(struct sd_dom *d, uint64_t now);
uint64_t sd_backoff_ms(const struct sd_dom *d);
const char *sd_phase_name(enum sd_phase p);
const char *sd_state_name(const struct sd_dom *d);
const char *sd_kind_name(enum sd_rkind k);
/* The earliest time d wants attention, or UINT64_MAX. */
uint64_t sd_dom_wake(const struct sd_dom *d);

/* ---- standby.c ---- */
/* Domain names: slot 0 is the config's name, slot 1 "<name>.2". */
#define SD_STANDBY_SUFFIX ".2"
const char *sd_dom_name(const struct sd_dom *d, unsigned slot, char *buf, size_t len);
void sd_standby_startup(struct sd_dom *d); /* adopt a running standby, or plan one */
void sd_standby_tick(struct sd_dom *d, uint64_t now);
void sd_standby_check(struct sd_dom *d); /* death events: look at the standby */
void sd_standby_heartbeat(struct sd_dom *d);
void sd_standby_done_op(struct sd_dom *d, enum sd_drv_op op, int rc, unsigned domid,
                        const char *err);
/* Promote: the domid of a ready, running standby, now the serving domain's
 * (slot swapped, watches dropped), or 0 if there is none. */
unsigned sd_standby_take(struct sd_dom *d);
uint64_t sd_standby_wake(const struct sd_dom *d);
const char *sd_standby_state_name(const struct sd_dom *d);

/* ---- rewire.c ---- */
/* Rewire v from its old backend to domain newdrv. 0, 1 (already done), or -1. */
int sd_rewire_dev(struct sd_dom *d, struct sd_dev *v, unsigned newdrv);
/* Has v reconnected to newdrv? */
bool sd_rewire_reconnected(struct sd_dom *d, struct sd_dev *v, unsigned newdrv);

/* ---- status.c / metrics.c ---- */
struct sbuf;
void sd_status_text(struct sd *sd, struct sbuf *b);
void sd_status_json(struct sd *sd, struct sbuf *b);
void sd_history_text(struct sd *sd, struct sbuf *b, bool json);
void sd_metrics(struct sd *sd, struct sbuf *b);
void sd_hist_add(struct sd *sd, const struct sd_hist *h);

/* ---- ctl.c ---- */
int sd_ctl_command(struct sd *sd, const char *line, struct sbuf *out);

#endif
