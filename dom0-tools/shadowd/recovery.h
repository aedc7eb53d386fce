/* recovery.h - the record of one recovery of a driver domain: what the
 * state machine of recover.c keeps, persist.c saves and status.c shows. */
#ifndef SD_RECOVERY_H
#define SD_RECOVERY_H

#include "drv.h"

#include <stdbool.h>
#include <stdint.h>

enum sd_rkind { RK_START = 0, RK_FAILURE, RK_PLANNED };
/* What found a failure (metrics count by it). */
enum sd_source { SRC_DEATH = 0, SRC_HEARTBEAT, SRC_REPORT, SRC_PLANNED, SRC_PAUSE, SRC_COUNT };

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
    unsigned look_id;     /* the look at every domain that found the failure; 0: none */
    bool sb_looked;       /* the standby promoted was seen running by that look */
    bool op_pending;      /* a driver create/destroy in flight */
    bool destroyed;       /* old domain destroyed (or gone) */
    uint64_t deadline;    /* PH_RECONNECT: give up waiting */
    bool warm;            /* the new domain is a promoted standby */
    bool fenced;          /* the old domain is fenced, not destroyed: destroyed after (fence.c) */
    bool resumed;         /* by a restarted shadowd: a device may be rewired already */
    /* The old domain as the detection saw it, when that was final (shut
     * down, dying, gone: no domain comes back from them; or paused while a
     * toolstack destroys it, teardown_until): taking it out
     * needs no second look through the driver (210 ms on Xen in QEMU).
     * Not persisted: a resumed recovery looks again. */
    bool old_final;
    struct sd_domstat old_st;
    /* A toolstack is destroying the old domain (detect.c, teardown): a cold
     * restart waits until then for it to be dying or gone instead of racing
     * that destroy with its own. 0: not so. Not persisted. */
    uint64_t teardown_until;
};

const char *sd_phase_name(enum sd_phase p);
const char *sd_kind_name(enum sd_rkind k);

#endif
