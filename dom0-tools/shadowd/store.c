/* store.c - shadowd's xenstore connection: the watches and their dispatch,
 * and the status keys shadowd publishes. A lost connection to xenstored is
 * fatal: shadowd exits and its unit restarts it; everything it knows is in
 * the state dir (xenstored itself does not restart under a running Xen). */
#define _GNU_SOURCE
#include "shadowd.h"

#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_RELEASE 'R'  /* @releaseDomain */
#define TOKEN_BACKEND 'B'  /* B<dom index>: /local/domain/<drv>/backend */
#define TOKEN_HB      'H'  /* H<dom index>: the agent's heartbeat */
#define TOKEN_FE      'F'  /* F<dom index>: a recorded device's frontend dir */
#define TOKEN_SB      'S'  /* S<dom index>: the standby's heartbeat */
#define MAX_EVENTS    4096 /* per call; more wait for the next loop turn */

static void watch(struct sd *sd, const char *path, char kind, unsigned idx)
{
    char tok[16];
    snprintf(tok, sizeof(tok), "%c%u", kind, idx);
    if (!xs_watch(sd->xs, path, tok))
        sd_log("xenstore watch %s: %s", path, strerror(errno));
}

static void unwatch(struct sd *sd, const char *path, char kind, unsigned idx)
{
    char tok[16];
    snprintf(tok, sizeof(tok), "%c%u", kind, idx);
    if (!xs_unwatch(sd->xs, path, tok) && errno != ENOENT)
        sd_log("xenstore unwatch %s: %s", path, strerror(errno));
}

int sd_store_open(struct sd *sd)
{
    /* Not XS_UNWATCH_FILTER: libxenstore 4.17 frees the events it filters
     * without their bodies (a leak per event). Stale events are harmless
     * here: dispatch() checks every path against what is watched now. */
    sd->xs = xs_open(0);
    if (!sd->xs) {
        sd_log("xs_open: cannot reach xenstored: %s", strerror(errno));
        return -1;
    }
    if (!xs_watch(sd->xs, "@releaseDomain", "R")) {
        sd_log("xenstore watch @releaseDomain: %s (is shadowd running in dom0?)", strerror(errno));
        xs_close(sd->xs);
        sd->xs = NULL;
        return -1;
    }
    return 0;
}

void sd_store_close(struct sd *sd)
{
    if (sd->xs)
        xs_close(sd->xs);
    sd->xs = NULL;
}

void sd_store_lost(struct sd *sd)
{
    sd->xs_lost = true;
}

void sd_store_watch_dom(struct sd_dom *d)
{
    struct sd *sd = d->sd;
    char path[128];
    if (d->watched_domid == d->domid)
        return;
    if (d->watched_domid) {
        snprintf(path, sizeof(path), "/local/domain/%u/backend", d->watched_domid);
        unwatch(sd, path, TOKEN_BACKEND, d->idx);
        unwatch(sd, d->hb_path, TOKEN_HB, d->idx);
        if (sd->drv[d->conf->driver] && d->ops->unwatch)
            d->ops->unwatch(sd->drv[d->conf->driver], d->watched_domid);
    }
    d->watched_domid = d->domid;
    d->hb_seen = false;
    d->hb_value[0] = 0;
    d->hb_path[0] = 0;
    if (!d->domid)
        return;
    snprintf(d->hb_path, sizeof(d->hb_path), "/local/domain/%u/%s", d->domid, USK_DRV_HEARTBEAT);
    snprintf(path, sizeof(path), "/local/domain/%u/backend", d->domid);
    watch(sd, path, TOKEN_BACKEND, d->idx);
    watch(sd, d->hb_path, TOKEN_HB, d->idx);
    if (d->ops->watch && d->ops->watch(sd->drv[d->conf->driver], d->domid) < 0)
        sd_dlog(d, "driver cannot watch domain %u for death; relying on @releaseDomain", d->domid);
}

void sd_store_watch_standby(struct sd_dom *d)
{
    struct sd_standby *s = &d->sb;
    if (s->hb_path[0] && d->sd->xs)
        unwatch(d->sd, s->hb_path, TOKEN_SB, d->idx);
    s->hb_path[0] = 0;
    if (!s->domid || !d->sd->xs)
        return;
    snprintf(s->hb_path, sizeof(s->hb_path), "/local/domain/%u/%s", s->domid, USK_DRV_HEARTBEAT);
    watch(d->sd, s->hb_path, TOKEN_SB, d->idx);
}

void sd_store_watch_dev(struct sd_dom *d, struct sd_dev *v)
{
    if (v->fe_watched)
        return;
    watch(d->sd, v->fe_path, TOKEN_FE, d->idx);
    v->fe_watched = true;
}

void sd_store_unwatch_dev(struct sd_dom *d, struct sd_dev *v)
{
    if (!v->fe_watched || !d->sd->xs)
        return;
    unwatch(d->sd, v->fe_path, TOKEN_FE, d->idx);
    v->fe_watched = false;
}

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
        if (!strcmp(path, d->hb_path))
            sd_detect_heartbeat(d);
        break;
    case TOKEN_SB:
        if (!strcmp(path, d->sb.hb_path))
            sd_standby_heartbeat(d);
        break;
    case TOKEN_FE: {
        const char *rel;
        struct sd_dev *v = dev_by_fe(d, path, &rel);
        if (!v)
            break;
        if (!strcmp(rel, USK_FE_REPORT))
            sd_detect_report(d, v);
        else if (!*rel || !strcmp(rel, "backend") || !strcmp(rel, "backend-id"))
            sd_record_fe_check(d, v);
        if (d->state == DS_RECOVERING)
            sd_recover_fe_event(d, v);
        break;
    }
    default:
        break;
    }
}

void sd_store_events(struct sd *sd)
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

/* The status keys, each written only when its value changed since shadowd
 * last wrote it (NULL: absent): a recovery's first status write is one
 * xenstore round trip, not seven, on the way from detection to restart. */
static void put(struct sd_dom *d, enum sd_pubkey k, const char *dir, const char *key,
                const char *val)
{
    struct sd_pub *c = &d->pub[k];
    if (val ? c->present && !strcmp(c->value, val) : c->known && !c->present)
        return;
    char p[256];
    if (!xsu_path(p, sizeof(p), dir, key))
        return;
    bool ok = val ? xsu_printf(d->sd->xs, XBT_NULL, dir, key, "%s", val) == 0
                  : xs_rm(d->sd->xs, XBT_NULL, p) || errno == ENOENT;
    if (!ok) {
        sd_dlog(d, "xenstore %s %s: %s", val ? "write" : "rm", p, strerror(errno));
        c->known = false; /* try again next time */
        return;
    }
    c->known = true;
    c->present = val != NULL;
    snprintf(c->value, sizeof(c->value), "%s", val ? val : "");
}

void sd_store_publish(struct sd_dom *d)
{
    if (!d->sd->xs)
        return;
    char dir[160], v[32], sb[32];
    snprintf(dir, sizeof(dir), "%s/%s", USK_SD_DIR, d->conf->name);
    put(d, PUB_STATE, dir, USK_SD_STATE, sd_state_name(d));
    snprintf(v, sizeof(v), "%u", d->domid);
    put(d, PUB_DOMID, dir, USK_SD_DOMID, d->domid ? v : NULL);
    snprintf(v, sizeof(v), "%llu", (unsigned long long)d->n_recoveries);
    put(d, PUB_RECOVERIES, dir, USK_SD_RECOVERIES, v);
    put(d, PUB_ERROR, dir, USK_SD_ERROR, d->state == DS_FAILED ? d->error : NULL);
    if (d->last_recovery[0])
        put(d, PUB_LAST, dir, USK_SD_LAST_RECOVERY, d->last_recovery);
    bool sb_on = d->sb.state != SB_OFF; /* absent without a standby configured */
    snprintf(sb, sizeof(sb), "%u", d->sb.domid);
    put(d, PUB_STANDBY, dir, USK_SD_STANDBY, sb_on ? sd_standby_state_name(d) : NULL);
    put(d, PUB_STANDBY_DOMID, dir, USK_SD_STANDBY_DOMID, sb_on && d->sb.domid ? sb : NULL);
}
