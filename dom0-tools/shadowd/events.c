/* events.c - xenstore watch events, each handed to the role that asked for
 * it: @releaseDomain and heartbeats to detection, backend dirs and frontend
 * dirs to recording (and the hot standby's connections in them), frontends
 * to the recovery in progress, the standby's
 * heartbeat to the standby. Tokens name the watch and the domain (store.h);
 * every path is checked against what is watched now, so a stale event (a
 * watch dropped since) does nothing. */
#define _GNU_SOURCE
#include "events.h"

#include "detect.h"
#include "dom.h"
#include "hotsb.h"
#include "log.h"
#include "record.h"
#include "recover.h"
#include "standby.h"
#include "store.h"

#include "pv-keys.h"
#include "sd_text.h"
#include "understudy-keys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xenstore.h>

#define MAX_EVENTS 4096 /* per call; more wait for the next loop turn */

/* The device of d whose frontend dir is path or contains it; *rel is the rest. */
static struct sd_dev *dev_by_fe(struct sd_dom *d, const char *path, const char **rel)
{
    for (unsigned i = 0; i < d->ndevs; i++) { /* O(devices); a few hundred at most */
        struct sd_dev *v = d->devs[i];
        size_t n = strlen(v->fe_path);
        if (!strncmp(path, v->fe_path, n) && (path[n] == 0 || path[n] == '/')) {
            *rel = path[n] ? path + n + 1 : "";
            return v;
        }
    }
    return NULL;
}

static void dispatch(struct sd *sd, const char *path, const char *tok)
{
    if (tok[0] == TOKEN_RELEASE && !tok[1]) {
        sd_detect_release(sd);
        return;
    }
    uint64_t idx;
    if (sd_parse_u64(tok + 1, sd->ndoms ? sd->ndoms - 1 : 0, &idx) < 0 || !sd->ndoms)
        return; /* not ours: a stale token after a reconfiguration */
    struct sd_dom *d = &sd->doms[idx];
    switch (tok[0]) {
    case TOKEN_BACKEND:
        sd_record_be_event(d, path);
        break;
    case TOKEN_HB:
        if (!strcmp(path, d->srv.hb.path))
            sd_detect_heartbeat(d);
        break;
    case TOKEN_CONSOLE:
        if (d->console_path[0] && !strncmp(path, d->console_path, strlen(d->console_path)) &&
            (!path[strlen(d->console_path)] || path[strlen(d->console_path)] == '/'))
            sd_detect_console(d);
        break;
    case TOKEN_SB:
        if (!strcmp(path, d->sb.inst.hb.path))
            sd_standby_heartbeat(d);
        break;
    case TOKEN_FE: {
        const char *rel;
        struct sd_dev *v = dev_by_fe(d, path, &rel);
        if (!v)
            break;
        if (!strcmp(rel, USK_FE_REPORT))
            sd_detect_report(d, v);
        else if (!*rel || !strcmp(rel, PVK_BACKEND) || !strcmp(rel, PVK_BACKEND_ID))
            sd_record_fe_check(d, v);
        else
            sd_hot_fe_event(d, v, rel); /* its slots, shadow/state, shadow/standby */
        if (d->state == DS_RECOVERING)
            sd_recover_fe_event(d, v);
        break;
    }
    default:
        break;
    }
}

void sd_events_dispatch(struct sd *sd)
{
    for (unsigned n = 0; n < MAX_EVENTS && sd->xs && !sd->xs_lost; n++) {
        char **ev = xs_check_watch(sd->xs);
        if (!ev) {
            if (errno != EAGAIN) {
                sd_log("xenstore: lost the connection to xenstored: %s", strerror(errno));
                sd_store_lost(sd);
            }
            return;
        }
        dispatch(sd, ev[XS_WATCH_PATH], ev[XS_WATCH_TOKEN]);
        free(ev);
    }
}
