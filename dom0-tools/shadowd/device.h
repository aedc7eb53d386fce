/* device.h - one recorded guest device: a backend dir of any type, the
 * toolstack keys it was configured with and its frontend dir. Class-blind:
 * a disk, a NIC and a sound card are all this. */
#ifndef SD_DEVICE_H
#define SD_DEVICE_H

#include "sd_text.h"

#include <stdbool.h>
#include <stdint.h>

#define SD_MAX_KEYS  128  /* toolstack keys recorded per device */
#define SD_MAX_VALUE 4096 /* bytes of one recorded value */

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
    /* The toolstack keys are frozen once the device is first paired: after
     * that the driver domain, which owns its backend dir, could have written
     * them (another guest's image as params, mode=w), and a restart must
     * not hand that to a fresh domain. Records loaded from the state file
     * are frozen. */
    bool frozen;
    bool tamper_logged; /* a change to frozen keys was logged */
    bool fe_watched;
    bool be_seen;    /* its backend dir exists in the current domain */
    bool report_due; /* a report event waits for report-interval */
    uint64_t last_report_ms;
    /* the reconnect of the recovery in progress */
    bool rewired, shadow_aware, reconnected;
    bool base_unknown; /* rewired by a shadowd that died before saving rec_base */
    bool gave_up;      /* its frontend said failed: not waited for */
    unsigned rewire_tries;
    uint64_t rec_base;  /* FE/shadow/recoveries when rewired */
    char fe_last[128];  /* FE/shadow/last-recovery when reconnected */
    bool hot_switched;  /* switched to its standby connection, Connected (rewire.c) */
    bool chmod_pending; /* switched: FE's permissions still to follow (rewire.c) */
    /* The hot standby's connection (hotsb.c, schema.md): what shadowd
     * believes of the store, reconciled from it while hot_known is false. */
    int live_slot;      /* the serving backend's frontend: 0 FE, SD_SLOT_A/B (record.c) */
    bool hot_known;     /* hot_slot and hot_up below are the store's */
    int hot_slot;       /* the slot held for the standby; 0: none */
    unsigned hot_domid; /* the standby it is attached to */
    uint64_t hot_since; /* attached (or adopted) at */
    bool hot_up;        /* its slot went Connected */
    bool hot_recheck;   /* hot_up, but the slot changed since: its state to read again */
    /* FE/shadow/generation and recoveries as last read while the slot is
     * held (fe_known), so that a switch need not read them (rewire.c); an
     * event for either clears fe_known until they are read again. */
    bool fe_known;
    uint64_t fe_gen, fe_rec;
    unsigned hot_refused;  /* the standby whose slot this frontend did not take in time */
    uint64_t hot_retry_ms; /* next attach attempt; UINT64_MAX: at the frontend's next change */
    bool stale_due;        /* look for a slot that is no longer live nor held */
};

#endif
