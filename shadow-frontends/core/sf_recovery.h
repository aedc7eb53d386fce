/* sf_recovery.h - the recovery state machine of a shadow frontend, as pure
 * bookkeeping: states, what was reported, phase timestamps, and the strings
 * for the shadow/report and shadow/last-recovery keys (schema.md). The
 * engine drives it and does the I/O.
 *
 *   CONNECTING --connected--> LIVE --fault--> RECOVERING --connected-->
 *   RECOVERING(replaying) --replayed--> LIVE;  any --mismatch--> FAILED
 *
 * A fault while RECOVERING (the new backend failed too) is folded into the
 * recovery in progress: a new report, back to waiting for a backend, but the
 * phase clock keeps the first detection.
 */
#ifndef SF_RECOVERY_H
#define SF_RECOVERY_H

#include <stdbool.h>
#include <stdint.h>

#define SF_REPORT_MAX 256 /* schema.md: shadow/report is at most 256 bytes */

enum sf_state {
    SF_CONNECTING = 0, /* first handshake, nothing issued yet */
    SF_LIVE,
    SF_RECOVERING,
    SF_FAILED, /* a different device, or given up: every request fails */
};

enum sf_kind {
    SF_TIMEOUT = 0,
    SF_BAD_RESPONSE,
    SF_BACKEND_CLOSED,
    SF_BACKEND_VANISHED,
    SF_BACKEND_RESTARTED,
};

struct sf_recovery {
    enum sf_state state;
    bool replaying;      /* RECOVERING: connected again, replay in progress */
    uint64_t report_seq; /* reports written so far */
    char report[SF_REPORT_MAX + 1];
    uint64_t t_evidence; /* the fault's first sign (sfr_detect) */
    uint64_t t_detect, t_connected, t_replayed;
    uint64_t recoveries; /* completed */
    unsigned faults;     /* faults folded into the recovery in progress */
    char last[128];      /* shadow/last-recovery of the last completed one */
};

void sfr_init(struct sf_recovery *r);

/* A fault of kind, seen at now; evidence_ms is its first sign (the issue of
 * the oldest outstanding request or the backend's last valid response after
 * it, whichever is later; now if nothing was outstanding). Formats r->report. Returns
 * true if a report is to be published (LIVE or RECOVERING; CONNECTING and
 * FAILED only retry or ignore). */
bool sfr_detect(struct sf_recovery *r, enum sf_kind kind, const char *detail, uint64_t now,
                uint64_t evidence_ms);

/* Connected to a backend: CONNECTING -> LIVE, RECOVERING -> replaying. */
void sfr_connected(struct sf_recovery *r, uint64_t now);

/* Replay finished: RECOVERING -> LIVE, recoveries++, r->last formatted. */
void sfr_replayed(struct sf_recovery *r, uint64_t now);

/* The device is not the one we had: FAILED for good. */
void sfr_fail(struct sf_recovery *r);

const char *sf_kind_name(enum sf_kind k);
/* The shadow/state word for a state: live, recovering, failed (CONNECTING
 * reads as recovering: requests wait). */
const char *sf_state_word(enum sf_state s);

#endif
