/* store.c - shadowd's xenstore connection and the watches it registers
 * (their events are dispatched by events.c). A lost connection to xenstored is
 * fatal: shadowd exits and its unit restarts it; everything it knows is in
 * the state dir (xenstored itself does not restart under a running Xen). */
#define _GNU_SOURCE
#include "store.h"

#include "dom.h"
#include "log.h"

#include "pv-keys.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
    if (d->srv.watched_domid == d->srv.domid)
        return;
    if (d->srv.watched_domid) {
        snprintf(path, sizeof(path), "/local/domain/%u/" PVK_BACKEND, d->srv.watched_domid);
        unwatch(sd, path, TOKEN_BACKEND, d->idx);
        unwatch(sd, d->srv.hb.path, TOKEN_HB, d->idx);
        unwatch(sd, d->console_path, TOKEN_CONSOLE, d->idx);
        if (sd->drv[d->conf->driver] && d->ops->unwatch)
            d->ops->unwatch(sd->drv[d->conf->driver], d->srv.watched_domid);
    }
    d->srv.watched_domid = d->srv.domid;
    d->srv.hb.seen = false;
    d->srv.hb.interval_ms = 0;
    d->srv.hb.value[0] = 0;
    d->srv.hb.path[0] = 0;
    d->console_path[0] = 0;
    d->console_seen = false;
    d->console_gone = false;
    if (!d->srv.domid)
        return;
    snprintf(d->srv.hb.path, sizeof(d->srv.hb.path), "/local/domain/%u/%s", d->srv.domid,
             USK_DRV_HEARTBEAT);
    snprintf(path, sizeof(path), "/local/domain/%u/" PVK_BACKEND, d->srv.domid);
    watch(sd, path, TOKEN_BACKEND, d->idx);
    watch(sd, d->srv.hb.path, TOKEN_HB, d->idx);
    snprintf(d->console_path, sizeof(d->console_path), "/local/domain/%u/console", d->srv.domid);
    watch(sd, d->console_path, TOKEN_CONSOLE, d->idx);
    if (d->ops->watch && d->ops->watch(sd->drv[d->conf->driver], d->srv.domid) < 0)
        sd_dlog(d, "driver cannot watch domain %u for death; relying on @releaseDomain",
                d->srv.domid);
}

void sd_store_watch_standby(struct sd_dom *d)
{
    struct sd_standby *s = &d->sb;
    if (s->inst.hb.path[0] && d->sd->xs)
        unwatch(d->sd, s->inst.hb.path, TOKEN_SB, d->idx);
    s->inst.hb.path[0] = 0;
    if (!s->inst.domid || !d->sd->xs)
        return;
    snprintf(s->inst.hb.path, sizeof(s->inst.hb.path), "/local/domain/%u/%s", s->inst.domid,
             USK_DRV_HEARTBEAT);
    watch(d->sd, s->inst.hb.path, TOKEN_SB, d->idx);
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
