/* standby.c - the standby domain (`standby on`): a second copy of a driver
 * domain, created from the same config, booted ahead and serving nothing
 * (hotsb.c gives it each shadow-aware frontend's idle connection). When the
 * serving domain fails, the recovery fences what is left of it (fence.c)
 * and promotes the standby instead of creating a domain (recover.c,
 * step_restart): the restart phase shrinks to a pause. A new standby is
 * booted once the domain is up again and the fenced domain, whose name it
 * takes, is destroyed.
 *
 * Names: Xen (and libvirt, and xensim) want domain names unique and cannot
 * rename a running domain everywhere, so a domain with a standby has two
 * names, "<name>" and "<name>.2" (sd_dom_name), and they alternate: the
 * standby is created under the name the serving domain does not have; after
 * a promotion the serving domain has the other one. Which is which is kept
 * in the state dir ("slot" in <name>.devices, saved before a promotion takes
 * effect), so a restarted shadowd adopts both.
 *
 * A standby is healthy while it is running with its agent's heartbeat
 * changing. One that dies, hangs or never boots is destroyed and replaced,
 * with the domain's backoff and restart budget counted for the standby on
 * its own (a crash-looping image cannot loop); past that budget shadowd does
 * without one (failures restart cold) and says so. Guests lose nothing when
 * it goes: no frontend points at a standby until it is promoted, and its
 * idle connections are removed with it (hotsb.c).
 *
 * Never during a recovery: a standby is not created while any domain of
 * this shadowd starts or recovers, and one that is booting then (its create
 * was under way when the failure came) is held - paused, state "held" -
 * until that is over, so its boot does not take the host the recovering
 * domain's boot needs (on Xen in QEMU a crash during a standby's create,
 * the two booting side by side, paused a guest's traffic 37 s). Its
 * boot-timeout counts from the release.
 * A standby that is ready stays running: it idles. */
#define _GNU_SOURCE
#include "standby.h"

#include "budget.h"
#include "dom.h"
#include "drv.h"
#include "instance.h"
#include "log.h"
#include "publish.h"
#include "store.h"
#include "sd_text.h"

#include <stdarg.h>
#include <stdio.h>

#define SB_RETRY_MS 1000 /* driver not reachable: try again */

static struct sd_drv *drv_of(struct sd_dom *d)
{
    return d->sd->drv[d->conf->driver];
}

/* A domain of this shadowd starting or recovering, or NULL. */
static const struct sd_dom *busy_dom(const struct sd_dom *d)
{
    const struct sd *sd = d->sd;
    for (unsigned i = 0; i < sd->ndoms; i++)
        if (sd->doms[i].state == DS_RECOVERING)
            return &sd->doms[i];
    return NULL;
}

static uint64_t sb_backoff(const struct sd_dom *d)
{
    return sd_budget_backoff(&d->sb.inst.budget, d->conf, 0); /* the first of a streak at once */
}

/* The standby's heartbeat watch, and the driver's death events for it. */
static void sb_watch(struct sd_dom *d)
{
    struct sd_standby *s = &d->sb;
    struct sd_drv *drv = drv_of(d);
    if (s->inst.watched_domid == s->inst.domid)
        return;
    if (s->inst.watched_domid && drv && d->ops->unwatch)
        d->ops->unwatch(drv, s->inst.watched_domid);
    sd_store_watch_standby(d); /* sets hb_path for s->inst.domid, drops the old watch */
    s->inst.watched_domid = s->inst.domid;
    s->inst.hb.value[0] = 0;
    if (s->inst.domid && drv && d->ops->watch && d->ops->watch(drv, s->inst.domid) < 0)
        sd_dlog(d, "driver cannot watch standby domain %u for death; relying on @releaseDomain",
                s->inst.domid);
}

static void sb_set(struct sd_dom *d, enum sd_sbstate st, unsigned domid)
{
    struct sd_standby *s = &d->sb;
    s->state = st;
    s->inst.domid = domid;
    sb_watch(d);
    d->devs_dirty = true; /* the standby's domid is in <name>.devices */
    sd_publish(d);
}

static void sb_created(struct sd_dom *d, unsigned domid, bool adopted)
{
    struct sd_standby *s = &d->sb;
    uint64_t now = sd_now();
    char name[80];
    s->inst.hb.start_ms = now;
    s->ready_ms = 0;
    s->no_hold = false;
    sb_set(d, SB_BOOTING, domid);
    sd_dlog(d, "standby: domain %u %s as %s%s", domid, adopted ? "adopted" : "created",
            sd_inst_name(&d->sb.inst, name, sizeof(name)),
            d->conf->heartbeat_timeout_ms ? "; waiting for its agent's heartbeat" : "");
    if (!d->conf->heartbeat_timeout_ms) { /* heartbeat off: running is all we can know */
        s->ready_ms = now;
        sb_set(d, SB_READY, domid);
        return;
    }
    sd_standby_heartbeat(d); /* it may be beating already (adopted) */
}

/* The standby failed (died, hung, never booted): destroy it, plan another. */
static void sb_failed(struct sd_dom *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_failed(struct sd_dom *d, const char *fmt, ...)
{
    struct sd_standby *s = &d->sb;
    char why[200], err[256] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    uint64_t now = sd_now();
    unsigned old = s->inst.domid;
    struct sd_drv *drv = drv_of(d);
    if (old && drv) {
        int rc = d->ops->destroy(drv, old, &d->sb.inst, err, sizeof(err));
        if (rc < 0)
            sd_dlog(d, "standby: destroying domain %u: %s", old, err);
        else if (rc == SD_DRV_PENDING)
            s->op_pending = true;
    }
    s->next_try_ms = now + sb_backoff(d); /* the first of a streak at once, then doubling */
    s->inst.budget.streak++;
    s->replacing = true;
    snprintf(s->inst.error, sizeof(s->inst.error), "%s", why);
    sb_set(d, SB_NONE, 0);
    sd_dlog(d, "standby: domain %u failed: %s; destroyed, a new one in %llu ms (guests untouched)",
            old, why, (unsigned long long)(s->next_try_ms - now));
}

/* Pause the booting standby while busy starts or recovers (see the top). */
static void sb_hold(struct sd_dom *d, const struct sd_dom *busy)
{
    struct sd_standby *s = &d->sb;
    char err[256] = "";
    if (!d->ops->unpause || d->ops->pause(drv_of(d), s->inst.domid, err, sizeof(err)) < 0) {
        s->no_hold = true; /* once: it boots on */
        sd_dlog(d, "standby: cannot hold domain %u while %s %s: %s; it boots on", s->inst.domid,
                busy->conf->name, sd_state_name(busy),
                d->ops->unpause ? err : "the driver cannot unpause");
        return;
    }
    s->held_ms = sd_now();
    sb_set(d, SB_HELD, s->inst.domid);
    sd_dlog(d, "standby: domain %u held (paused) while %s is %s; its boot goes on after",
            s->inst.domid, busy->conf->name, sd_state_name(busy));
}

/* Nothing starts or recovers any more: let the held standby boot on. */
static void sb_release(struct sd_dom *d)
{
    struct sd_standby *s = &d->sb;
    char err[256] = "";
    if (d->ops->unpause(drv_of(d), s->inst.domid, err, sizeof(err)) < 0) {
        sb_failed(d, "cannot unpause it after holding it: %s", err);
        return;
    }
    uint64_t now = sd_now();
    s->inst.hb.start_ms = now; /* its boot-timeout counts from here */
    sb_set(d, SB_BOOTING, s->inst.domid);
    sd_dlog(d, "standby: domain %u released after %llu ms held; booting on", s->inst.domid,
            (unsigned long long)(now - s->held_ms));
}

void sd_standby_heartbeat(struct sd_dom *d)
{
    struct sd_standby *s = &d->sb;
    if (!s->inst.hb.path[0] || (s->state != SB_BOOTING && s->state != SB_READY))
        return;
    uint64_t now = sd_now();
    if (sd_inst_heartbeat(&s->inst, d->sd->xs, now) == 1 && s->state == SB_BOOTING) {
        s->ready_ms = now;
        sd_dlog(d, "standby: domain %u ready, heartbeat seen %llu ms after its start",
                s->inst.domid, (unsigned long long)(now - s->inst.hb.start_ms));
        sb_set(d, SB_READY, s->inst.domid);
    }
}

bool sd_standby_lookable(const struct sd_dom *d)
{
    const struct sd_standby *s = &d->sb;
    return drv_of((struct sd_dom *)d) && s->inst.domid &&
           (s->state == SB_BOOTING || s->state == SB_HELD || s->state == SB_READY);
}

/* What a look saw of the standby: replaced later if it is dead. */
static void judge(struct sd_dom *d, const struct sd_domstat *st)
{
    struct sd_standby *s = &d->sb;
    if (st->run == SD_RUN_RUNNING || st->run == SD_RUN_PAUSED)
        return; /* paused: the heartbeat decides */
    if (st->run == SD_RUN_GONE)
        sb_failed(d, "domain %u is gone", s->inst.domid);
    else
        sb_failed(d, "domain %u shut down (reason %s)", s->inst.domid, sd_reason_name(st->reason));
}

void sd_standby_check(struct sd_dom *d)
{
    struct sd_standby *s = &d->sb;
    if (!sd_standby_lookable(d))
        return;
    struct sd_domstat st;
    char err[256];
    if (d->ops->info(drv_of(d), s->inst.domid, &st, err, sizeof(err)) < 0) {
        sd_dlog(d, "standby: cannot look at domain %u: %s", s->inst.domid, err);
        return;
    }
    judge(d, &st);
}

void sd_standby_seen(struct sd_dom *d, const struct sd_domstat *st, unsigned look_id)
{
    d->sb.look_st = *st;
    d->sb.look_id = look_id;
    /* A domain whose recovery is about to restart judges its standby when
     * it promotes it (sd_standby_fit), from this look. */
    if (!(d->state == DS_RECOVERING && d->rec.phase == PH_RESTART))
        judge(d, st);
}

void sd_standby_done_op(struct sd_dom *d, enum sd_drv_op op, int rc, unsigned domid,
                        const char *err)
{
    struct sd_standby *s = &d->sb;
    if (!s->op_pending)
        return;
    s->op_pending = false;
    if (op == SD_OP_DESTROY) {
        if (rc < 0)
            sd_dlog(d, "standby: destroy failed: %s", err ? err : "?");
        return;
    }
    if (rc < 0) {
        s->inst.budget.streak++;
        s->replacing = true; /* a failed create counts against the budget too */
        s->next_try_ms = sd_now() + sb_backoff(d);
        sd_dlog(d, "standby: create failed: %s; next try in %llu ms", err ? err : "?",
                (unsigned long long)sb_backoff(d));
        return;
    }
    sb_created(d, domid, false);
}

/* Create one (state SB_NONE, due, the domain up). */
static void sb_create(struct sd_dom *d, uint64_t now)
{
    struct sd_standby *s = &d->sb;
    struct sd_drv *drv = drv_of(d);
    char name[80], err[256] = "";
    sd_inst_name(&d->sb.inst, name, sizeof(name));
    if (s->replacing) {
        if (!sd_budget_ok(&s->inst.budget, d->conf, now)) {
            char w[32], last[sizeof(s->inst.error)];
            sd_format_duration(w, sizeof(w), d->conf->restart_window_ms);
            snprintf(last, sizeof(last), "%s", s->inst.error);
            sd_strfmt(s->inst.error, sizeof(s->inst.error),
                      "standby restart budget exhausted: %u replacements within %s (last: %s)",
                      d->conf->restart_budget, w, last);
            sd_dlog(d,
                    "standby: GIVING UP on a standby: %s. Failures will restart the domain "
                    "cold; shadowctl restart %s tries again",
                    s->inst.error, d->conf->name);
            sb_set(d, SB_FAILED, 0);
            return;
        }
        sd_budget_spend(&s->inst.budget, d->conf, now);
        s->n_replacements++;
        s->replacing = false;
    }
    /* A domain already under the standby's name: ours from before (adopt a
     * running one), or a leftover (destroy it). */
    unsigned other;
    if (d->ops->find(drv, name, &other, err, sizeof(err)) == 0 && other != d->srv.domid) {
        struct sd_domstat st;
        if (d->ops->info(drv, other, &st, err, sizeof(err)) == 0 &&
            (st.run == SD_RUN_RUNNING || st.run == SD_RUN_PAUSED)) {
            sb_created(d, other, true);
            return;
        }
        if (d->ops->destroy(drv, other, &d->sb.inst, err, sizeof(err)) < 0) {
            s->next_try_ms = now + SB_RETRY_MS;
            sd_dlog(d, "standby: destroying leftover domain %u (%s): %s", other, name, err);
            return;
        }
    }
    unsigned domid = 0;
    int rc = d->ops->create(drv, d->conf, name, false, &d->sb.inst, &domid, err, sizeof(err));
    if (rc < 0) {
        s->inst.budget.streak++;
        s->replacing = true; /* a failed create counts against the budget too */
        s->next_try_ms = now + (sb_backoff(d) > SB_RETRY_MS ? sb_backoff(d) : SB_RETRY_MS);
        sd_dlog(d, "standby: creating %s failed: %s; next try in %llu ms", name, err,
                (unsigned long long)(s->next_try_ms - now));
    } else if (rc == SD_DRV_PENDING) {
        s->op_pending = true;
    } else {
        sb_created(d, domid, false);
    }
}

void sd_standby_tick(struct sd_dom *d, uint64_t now)
{
    struct sd_standby *s = &d->sb;
    const struct sd_domconf *c = d->conf;
    if (s->state == SB_OFF || s->state == SB_FAILED || s->op_pending || !drv_of(d))
        return;
    switch (s->state) {
    case SB_NONE:
        /* Booted only while the domain is up: never competing with a
         * recovery; and not before the domain fenced at the last promotion
         * is destroyed, which has the name the standby is created under. */
        if (d->state == DS_UP && now >= s->next_try_ms && !d->reap.inst.domid && !busy_dom(d))
            sb_create(d, now);
        break;
    case SB_BOOTING: {
        const struct sd_dom *busy = s->no_hold ? NULL : busy_dom(d);
        if (busy)
            sb_hold(d, busy);
        else if (c->heartbeat_timeout_ms && now > s->inst.hb.start_ms + c->boot_timeout_ms)
            sb_failed(d, "no heartbeat within boot-timeout (%llu ms)",
                      (unsigned long long)c->boot_timeout_ms);
        break;
    }
    case SB_HELD:
        if (!busy_dom(d))
            sb_release(d);
        break;
    case SB_READY:
        if (c->heartbeat_timeout_ms && now > s->inst.hb.change_ms + c->heartbeat_timeout_ms) {
            sb_failed(d, "heartbeat lost (unchanged for %llu ms)",
                      (unsigned long long)(now - s->inst.hb.change_ms));
        } else if (s->inst.budget.streak && now >= s->ready_ms + c->stable_ms) {
            sd_dlog(d, "standby: domain %u up for %llu ms: its backoff reset", s->inst.domid,
                    (unsigned long long)(now - s->ready_ms));
            s->inst.budget.streak = 0;
        }
        break;
    default:
        break;
    }
}

uint64_t sd_standby_wake(const struct sd_dom *d)
{
    const struct sd_standby *s = &d->sb;
    const struct sd_domconf *c = d->conf;
    if (s->op_pending)
        return UINT64_MAX;
    switch (s->state) {
    case SB_NONE:
        /* a recovery's end turns the loop; a wake before it would spin */
        return d->state == DS_UP && !d->reap.inst.domid && !busy_dom(d) ? s->next_try_ms
                                                                        : UINT64_MAX;
    case SB_BOOTING:
        return c->heartbeat_timeout_ms ? s->inst.hb.start_ms + c->boot_timeout_ms + 1 : UINT64_MAX;
    case SB_READY: {
        uint64_t w = c->heartbeat_timeout_ms ? s->inst.hb.change_ms + c->heartbeat_timeout_ms + 1
                                             : UINT64_MAX;
        if (s->inst.budget.streak && s->ready_ms + c->stable_ms < w)
            w = s->ready_ms + c->stable_ms;
        return w;
    }
    default:
        return UINT64_MAX;
    }
}

/* Ready to promote, as far as shadowd knows (sd_standby_fit also looks). */
static bool sb_ready(const struct sd_standby *s)
{
    return s->state == SB_READY && s->inst.domid && !s->op_pending;
}

bool sd_standby_ready(const struct sd_dom *d)
{
    return sb_ready(&d->sb);
}

bool sd_standby_fit(struct sd_dom *d)
{
    struct sd_standby *s = &d->sb;
    struct sd_drv *drv = drv_of(d);
    if (!sb_ready(s) || !drv)
        return false;
    /* The look that found the failure (or a later one) saw the standby
     * too: no second round trip to the driver before the switch. */
    struct sd_recovery *r = &d->rec;
    if (d->state == DS_RECOVERING && r->look_id && s->look_id >= r->look_id && !r->attempts) {
        s->look_id = 0; /* used once */
        r->sb_looked = s->look_st.run == SD_RUN_RUNNING;
        if (r->sb_looked)
            return true;
        judge(d, &s->look_st); /* dead: replaced later; paused: not fit to serve */
        return false;
    }
    struct sd_domstat st;
    char err[256];
    if (d->ops->info(drv, s->inst.domid, &st, err, sizeof(err)) < 0 || st.run != SD_RUN_RUNNING) {
        sd_standby_check(d); /* dead: replaced later; paused: not fit to serve */
        return false;
    }
    return true;
}

unsigned sd_standby_take(struct sd_dom *d)
{
    struct sd_standby *s = &d->sb;
    if (!sb_ready(s))
        return 0;
    unsigned domid = s->inst.domid;
    /* Its watches are dropped by the caller, after the switch (recover.c,
     * created): its death watch, and its heartbeat's, which SB_NONE ignores
     * until then. */
    s->inst.watched_domid = 0;
    s->inst.domid = 0;
    s->state = SB_NONE;
    s->replacing = false;
    s->next_try_ms = 0; /* a new one as soon as the domain is up again */
    s->n_promotions++;
    d->slot = !d->slot;
    d->devs_dirty = true;
    return domid;
}

void sd_standby_startup(struct sd_dom *d)
{
    struct sd_standby *s = &d->sb;
    if (!d->conf->standby) {
        s->state = SB_OFF;
        return;
    }
    struct sd_drv *drv = drv_of(d);
    char name[80], err[256];
    unsigned recorded = s->inst.domid, domid;
    s->inst.domid = 0;
    s->state = SB_NONE;
    s->next_try_ms = 0;
    sd_inst_name(&d->sb.inst, name, sizeof(name));
    if (!drv || d->ops->find(drv, name, &domid, err, sizeof(err)) < 0)
        return; /* none: one is created when the domain is up */
    struct sd_domstat st;
    if (domid == d->srv.domid || domid == d->rec.new_domid || domid == d->rec.old_domid ||
        domid == d->reap.inst.domid) {
        sd_dlog(d, "standby: domain %u (%s) is the serving domain or a predecessor; not a standby",
                domid, name);
        return;
    }
    if (d->ops->info(drv, domid, &st, err, sizeof(err)) == 0 &&
        (st.run == SD_RUN_RUNNING || st.run == SD_RUN_PAUSED)) {
        if (recorded && recorded != domid)
            sd_dlog(d, "standby: %s is domain %u now (recorded: %u)", name, domid, recorded);
        sb_created(d, domid, true);
        if (st.run == SD_RUN_PAUSED && d->sb.state == SB_BOOTING) {
            /* held by the shadowd before us: released when nothing recovers */
            d->sb.held_ms = sd_now();
            sb_set(d, SB_HELD, domid);
        }
        return;
    }
    sd_dlog(d, "standby: domain %u (%s) found shut down; destroying it", domid, name);
    if (d->ops->destroy(drv, domid, &d->sb.inst, err, sizeof(err)) == SD_DRV_PENDING)
        s->op_pending = true;
}
