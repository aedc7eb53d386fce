/* dom.h - a driver domain as shadowd keeps it: its config, its serving
 * instance and its warm standby (instance.h), the devices it serves
 * (device.h), the recovery in progress (recovery.h), and shadowd's whole
 * state (struct sd). The types only; each role's functions are in its own
 * header: store.h (xenstore connection, watches), events.h (their
 * dispatch), publish.h (status keys), record.h (recording devices),
 * persist.h (state dir), detect.h, recover.h, standby.h, hotsb.h (the
 * hot standby's connections), fence.h (the failed domain at a promotion),
 * rewire.h, status.h, metrics.h, ctl.h, log.h. */
#ifndef SD_DOM_H
#define SD_DOM_H

#include "budget.h"
#include "conf.h"
#include "device.h"
#include "drv.h"
#include "history.h"
#include "instance.h"
#include "recovery.h"
#include "xspool.h"

#include <stdbool.h>
#include <stdint.h>

#define SD_REWIRE_CHUNK  64 /* devices rewired per loop iteration (on xspool's connections) */
#define SD_MAX_REPORTERS 16 /* distinct guests remembered for corroboration */

enum sd_dstate {
    DS_UP = 0,     /* running; recording and detection active */
    DS_RECOVERING, /* see struct sd_recovery */
    DS_FAILED,     /* past the restart budget: left down, loudly */
};

struct sd_reporter {
    unsigned guest;
    uint64_t at;
};

/* The warm standby (standby.c): a second instance of the driver domain,
 * booted ahead under the other of the domain's two names, serving nothing. */
enum sd_sbstate {
    SB_OFF = 0, /* not configured */
    SB_NONE,    /* none now: one is created at next_try_ms, while the domain is up */
    SB_BOOTING, /* created; its agent's first heartbeat not seen yet */
    SB_HELD,    /* booting, but paused while a domain starts or recovers (standby.c) */
    SB_READY,   /* heartbeat seen: promoted at the next failure */
    SB_FAILED,  /* past its restart budget: failures restart cold */
};

/* A failed domain after a promotion (fence.c): fenced (paused or shut
 * down) before the standby took over, destroyed in the background after
 * the frontends were switched. Its inst.domid is 0 while there is none; it
 * is in <name>.devices, so a restarted shadowd destroys it too. */
struct sd_reap {
    struct sd_inst inst; /* its role is SD_ROLE_FENCED, the arg of its destroy */
    bool op_pending;     /* the driver's destroy in flight */
    uint64_t armed_ms;   /* promoted over it at */
    uint64_t next_try_ms;
    unsigned tries;
};

struct sd_standby {
    enum sd_sbstate state;
    struct sd_inst inst; /* its domain, heartbeat, budget of replacements */
    uint64_t ready_ms;
    uint64_t next_try_ms;
    bool replacing;   /* the next create replaces a failed standby: counts for its budget */
    bool op_pending;  /* a driver create/destroy in flight */
    bool no_hold;     /* this one could not be paused: it boots on */
    uint64_t held_ms; /* held (SB_HELD) since */
    uint64_t n_promotions, n_replacements;
    /* What the last look at every domain (sd_detect_release) saw of it, and
     * that look's number: a promotion found by the same look uses it. */
    struct sd_domstat look_st;
    unsigned look_id;
};

/* What shadowd last wrote to one of its status keys (publish.c). */
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

struct sd;

struct sd_dom {
    struct sd *sd;
    unsigned idx;
    const struct sd_domconf *conf;
    const struct sd_drv_ops *ops;
    struct sd_drv *drv;
    /* the serving domain; its domid is 0 while there is none, its error
     * why the domain is FAILED. The arg of its driver operations. */
    struct sd_inst srv;
    enum sd_dstate state;
    char last_recovery[160]; /* USK_SD_LAST_RECOVERY of the last one */
    uint64_t up_since;
    struct sd_dev **devs;
    unsigned ndevs;
    bool devs_dirty; /* persist the records */
    /* shadowd started: whether a switch left frontend dirs' permissions to
     * set (chmod_pending is not persisted) is yet to be looked at (rewire.c) */
    bool perms_unknown;
    bool scan_due; /* rescan every backend dir */
    uint64_t next_scan_ms;
    /* reports */
    struct sd_reporter reporters[SD_MAX_REPORTERS];
    unsigned nreporters;
    char lone_why[160];     /* the last lone report, for the reason if the domain corroborates it */
    uint64_t pause_next_ms; /* a still heartbeat's domain found running: ask again then */
    /* The serving domain's console dir, watched: its removal while the
     * domain is paused is a toolstack's destroy under way (detect.c). */
    char console_path[48];
    bool console_seen;
    bool console_gone;                                  /* ... gone: the next look judges it */
    struct sd_reporter guest_triggers[SD_MAX_RESTARTS]; /* report-triggered recoveries */
    unsigned ntriggers;
    /* the recovery in progress (state DS_RECOVERING) */
    struct sd_recovery rec;
    unsigned next_rec_id;
    /* counters */
    uint64_t n_recoveries, n_failures, n_restarts, n_reports_accepted, n_reports_ignored;
    uint64_t n_detect[SRC_COUNT]; /* by enum sd_source */
    uint64_t phase_sum[4], phase_count;
    bool persisted_rec;   /* a recovery file exists */
    bool startup_pending; /* the driver could not be asked yet */
    uint64_t startup_retry_ms;
    /* the domain's names: slot 0 is the config's name, slot 1 the standby's
     * "<name>.2"; slot says which one the serving domain has */
    unsigned slot;
    struct sd_standby sb; /* its instance's role is SD_ROLE_STANDBY, the arg of its operations */
    struct sd_reap reap;  /* the failed domain, destroyed after a promotion */
    /* the hot standby's connections (hotsb.c) */
    bool hot_due;          /* look at the devices' connections to the standby now */
    uint64_t hot_next_ms;  /* ... or then */
    unsigned hot_sb_domid; /* the standby they were last looked at for */
    bool hot_sb_ready;
    struct sd_pub pub[PUB_KEYS];
};

struct sd {
    struct sd_conf *conf;
    struct xs_handle *xs;
    struct xs_handle *xsp[SD_XSPOOL_MAX]; /* more connections, for work in parallel (xspool.c) */
    unsigned nxsp;
    struct sd_dom *doms;
    unsigned ndoms;
    struct sd_drv *drv[SD_DRIVER_KINDS]; /* by enum sd_driver_kind */
    char boot_id[40];
    struct sd_histring hist; /* the last finished recoveries */
    bool xs_lost;
    uint64_t started_ms;
    int state_fd;     /* the state dir, open (persist.c) */
    unsigned look_id; /* counts the looks at every domain (detect.c) */
    bool look_due;    /* a death event asked for one */
};

/* The words for states, as status keys, status and metrics show them (dom.c). */
const char *sd_state_name(const struct sd_dom *d);
const char *sd_standby_state_name(const struct sd_dom *d);
const char *sd_reason_name(int reason); /* SD_SHUT_* as a word */

#endif
