/* understudy-keys.h - names of the xenstore keys Understudy reads or writes
 * beyond the standard PV protocol keys of xen/io/blkif.h, netif.h and
 * xenbus.h. Each is documented in schema.md: writer, reader, format. Code
 * refers to keys by these names only.
 */
#ifndef UNDERSTUDY_KEYS_H
#define UNDERSTUDY_KEYS_H

/* ---- under a frontend's device dir, e.g. device/vbd/51712 ---- */
/* Bumped by the toolstack after it has rewired the device to a new backend. */
#define USK_FE_GENERATION "shadow/generation"
/* The frontend's recovery state: one of the USK_STATE_* words. */
#define USK_FE_STATE "shadow/state"
/* What the frontend saw that made it start a recovery (see schema.md). */
#define USK_FE_REPORT "shadow/report"
/* Count of completed recoveries, decimal. */
#define USK_FE_RECOVERIES "shadow/recoveries"
/* Phase durations of the last recovery: "detect=<ms> reconnect=<ms> replay=<ms> total=<ms>". */
#define USK_FE_LAST_RECOVERY "shadow/last-recovery"
/* Sound: the audio the last recovery dropped, ms (the largest of the card's
 * streams' gaps; 0 when nothing was playing or capturing). */
#define USK_FE_LAST_GAP "shadow/last-gap"

/* Hot standby (schema.md, "The hot standby's connection"): the slot the
 * frontend connects to and holds idle, one of the USK_FE_SLOT_* names;
 * absent: none. The slots are dirs below the device dir. */
#define USK_FE_STANDBY  "shadow/standby"
#define USK_FE_SLOT_A   "slot-a"
#define USK_FE_SLOT_B   "slot-b"
#define USK_FE_SLOT_DIR "shadow" /* a slot's dir: FE/shadow/<slot> */

/* Decimal generation G: every backend that served the device before
 * generation G is fenced (destroyed, its I/O drained). Absent: 0. */
#define USK_FE_FENCED "shadow/fenced"

#define USK_STATE_LIVE       "live"
#define USK_STATE_RECOVERING "recovering"
#define USK_STATE_FAILED     "failed"

/* ---- under a backend dir, e.g. backend/vbd/<fe-domid>/<devid> ---- */
/* Write cache of our blkback: "none" (O_DIRECT, the default), "writeback"
 * (page cache, fsync on flush), "volatile" (held in the backend process until
 * a flush; lost when the process dies - a disk with a volatile write cache). */
#define USK_BE_CACHE "cache"

/* ---- under a driver domain's own dir, /local/domain/<drv> ---- */
/* The driverdom agent's heartbeat: CLOCK_MONOTONIC milliseconds, decimal. */
#define USK_DRV_HEARTBEAT "data/understudy/heartbeat"
/* Fault injection for tests and `shadowctl inject`, written by dom0 only:
 * "<seq> <fault> [<count>]", fault one of USK_FAULT_*. A backend watches it
 * and acts once per new seq. */
#define USK_DRV_INJECT    "data/understudy/inject"
#define USK_FAULT_CORRUPT "corrupt" /* the next <count> responses are invalid */
#define USK_FAULT_HANG    "hang"    /* stop serving requests (not the process) */
#define USK_FAULT_SLOW    "slow"    /* delay each response by <count> ms */
#define USK_FAULT_CRASH   "crash"   /* abort() the backend process */

/* ---- shadowd's status, in dom0's own store, one dir per driver domain:
 * USK_SD_DIR/<name>/..., written by shadowd, perms n0 (dom0 only) ---- */
#define USK_SD_DIR "/local/domain/0/data/understudy/shadowd"
/* One of the USK_SD_STATE_* words. */
#define USK_SD_STATE            "state"
#define USK_SD_STATE_UP         "up"
#define USK_SD_STATE_STARTING   "starting"
#define USK_SD_STATE_RECOVERING "recovering"
#define USK_SD_STATE_FAILED     "failed"
/* The domid now serving (decimal), absent while none does. */
#define USK_SD_DOMID "domid"
/* Recoveries completed, decimal. */
#define USK_SD_RECOVERIES "recoveries"
/* "detect=<ms> restart=<ms> rewire=<ms> reconnect=<ms> total=<ms>" of the last recovery. */
#define USK_SD_LAST_RECOVERY "last-recovery"
/* Why the domain is failed (left down), one line of text; absent otherwise. */
#define USK_SD_ERROR "error"
/* With `standby on`: the warm standby, one of the USK_SD_STANDBY_* words;
 * absent without a standby configured. */
#define USK_SD_STANDBY         "standby"
#define USK_SD_STANDBY_NONE    "none"    /* none now (one is booted once the domain is up) */
#define USK_SD_STANDBY_BOOTING "booting" /* created, heartbeat not seen yet */
#define USK_SD_STANDBY_HELD    "held"    /* booting, paused while a domain starts or recovers */
#define USK_SD_STANDBY_READY   "ready"   /* promoted at the next failure */
#define USK_SD_STANDBY_FAILED  "failed"  /* past its restart budget: failures restart cold */
/* The standby's domid (decimal); absent while there is none. */
#define USK_SD_STANDBY_DOMID "standby-domid"

#endif
