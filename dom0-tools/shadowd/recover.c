/* recover.c - the recovery of one driver domain (DESIGN.md, "The recovery
 * sequence", steps 1, 3, 4 and 6), as a state machine driven by the loop:
 *
 *   UP --failure--> RECOVERING/restart --created--> rewire --all written-->
 *   reconnect --every frontend back, or reconnect-timeout--> UP
 *
 * restart waits out the backoff, checks the budget, destroys what is left of
 * the failed domain and creates a new one; a failure of the new domain
 * before the recovery is over folds into it (back to restart, one more
 * attempt). Past the budget the domain is FAILED: left down and reported.
 * With a standby (standby.c) ready, restart fences the failed domain
 * (fence.c: pauses it) and promotes the standby instead of creating a
 * domain; rewire switches each device that holds a connection to it
 * (hotsb.c) to that connection, and the failed domain is destroyed in the
 * background once the rewire is written.
 * Every phase change is persisted first, so a restarted shadowd resumes it. */
#define _GNU_SOURCE
#include "recover.h"

#include "budget.h"
#include "detect.h"
#include "dom.h"
#include "drv.h"
#include "fence.h"
#include "history.h"
#include "hotsb.h"
#include "instance.h"
#include "log.h"
#include "persist.h"
#include "publish.h"
#include "record.h"
#include "rewire.h"
#include "standby.h"
#include "store.h"

#include "sd_text.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RECONNECT_POLL_MS 250 /* re-check frontends between their events */
#define REWIRE_RETRY_MS   100
#define REWIRE_MAX_TRIES  5
#define STARTUP_RETRY_MS  1000

uint64_t sd_backoff_ms(const struct sd_dom *d)
{
    return sd_budget_backoff(&d->srv.budget, d->conf, d->conf->restart_delay_ms);
}

static void note_restart(struct sd_dom *d, uint64_t now)
{
    sd_budget_spend(&d->srv.budget, d->conf, now);
    d->srv.budget.streak++;
    d->n_restarts++;
    d->devs_dirty = true;
}

static unsigned paired_count(const struct sd_dom *d)
{
    unsigned n = 0;
    for (unsigned i = 0; i < d->ndevs; i++)
        n += d->devs[i]->paired;
    return n;
}

/* The per-recovery flags of every device, cleared. A switched device's
 * permissions still to set (chmod_pending) outlive the recovery that
 * switched it (sd_rewire_perms_tick sets them once it is over), but not the
 * start of the next, whose rewire sets them again. */
static void clear_dev_flags(struct sd_dom *d, bool keep_perms)
{
    for (unsigned i = 0; i < d->ndevs; i++) {
        struct sd_dev *v = d->devs[i];
        v->rewired = v->reconnected = v->shadow_aware = v->base_unknown = v->gave_up = false;
        v->hot_switched = false;
        v->chmod_pending = v->chmod_pending && keep_perms;
        v->rewire_tries = 0;
        v->rec_base = 0;
    }
}

/* Records the recovery; phases (if not NULL) gets its phase line
 * (SD/last-recovery's format), partial or not. */
static void record_history(struct sd_dom *d, bool ok, const char *outcome, uint64_t end,
                           char *phases, size_t plen)
{
    struct sd_recovery *r = &d->rec;
    struct sd_hist h = {0};
    snprintf(h.domain, sizeof(h.domain), "%s", d->conf->name);
    h.id = r->id;
    h.kind = r->kind;
    h.ok = ok;
    snprintf(h.reason, sizeof(h.reason), "%s", r->reason);
    snprintf(h.outcome, sizeof(h.outcome), "%s", outcome);
    h.old_domid = r->old_domid;
    h.new_domid = r->new_domid;
    h.attempts = r->attempts;
    for (unsigned i = 0; i < d->ndevs; i++) {
        h.devices += d->devs[i]->rewired;
        h.reconnected += d->devs[i]->reconnected;
        h.hot += d->devs[i]->rewired && d->devs[i]->hot_switched;
    }
    uint64_t t_restarted = r->t_restarted ? r->t_restarted : end;
    uint64_t t_rewired = r->t_rewired ? r->t_rewired : end;
    h.detect_ms = r->t_detect - r->t_evidence;
    h.restart_ms = t_restarted - r->t_detect;
    h.rewire_ms = t_rewired - t_restarted;
    h.reconnect_ms = end - t_rewired;
    h.total_ms = end - r->t_evidence;
    h.wall = (uint64_t)time(NULL);
    h.warm = r->warm;
    if (phases)
        snprintf(phases, plen, "detect=%llu restart=%llu rewire=%llu reconnect=%llu total=%llu",
                 (unsigned long long)h.detect_ms, (unsigned long long)h.restart_ms,
                 (unsigned long long)h.rewire_ms, (unsigned long long)h.reconnect_ms,
                 (unsigned long long)h.total_ms);
    if (r->kind == RK_START && ok)
        return; /* a first start is not a recovery */
    sd_hist_add(&d->sd->hist, &h);
    sd_persist_history_append(d->sd, &h);
    if (ok) {
        d->phase_sum[0] += h.detect_ms;
        d->phase_sum[1] += h.restart_ms;
        d->phase_sum[2] += h.rewire_ms;
        d->phase_sum[3] += h.reconnect_ms;
        d->phase_count++;
    }
}

/* Past the budget: leave it down (for inspection) and say so loudly. */
static void fail_dom(struct sd_dom *d, const char *why)
{
    uint64_t now = sd_now();
    snprintf(d->srv.error, sizeof(d->srv.error), "%s", why);
    sd_dlog(d,
            "recovery %u: GIVING UP: %s; the domain is left down and its %u devices are "
            "without a backend. Fix the cause, then: shadowctl restart %s",
            d->rec.id, why, paired_count(d), d->conf->name);
    d->n_failures++;
    record_history(d, false, why, now, NULL, 0);
    d->state = DS_FAILED;
    d->srv.domid = d->rec.old_domid;
    sd_hot_reset(d);
    sd_store_watch_dom(d);
    sd_persist_drop_rec(d);
    d->devs_dirty = true;
    sd_publish(d);
}

void sd_recover_start(struct sd_dom *d, enum sd_rkind kind, enum sd_source src,
                      uint64_t evidence_ms, const char *fmt, ...)
{
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    uint64_t now = sd_now();
    struct sd_recovery *r = &d->rec;
    if (d->state == DS_FAILED && kind != RK_PLANNED)
        return;
    if (d->state == DS_RECOVERING) {
        if (r->phase == PH_RESTART)
            return; /* already on it */
        /* The new domain failed before the recovery was over. */
        sd_dlog(d, "recovery %u: new domain %u failed during %s: %s; restarting it again", r->id,
                r->new_domid, sd_phase_name(r->phase), why);
        size_t l = strlen(r->reason);
        if (l + 12 < sizeof(r->reason))
            sd_strfmt(r->reason + l, sizeof(r->reason) - l, "; then %s", why);
        r->old_domid = r->new_domid;
        r->new_domid = 0;
        r->old_final = false;
        r->teardown_until = 0;
        r->look_id = 0;
        r->sb_looked = false;
        r->phase = PH_RESTART;
        r->destroyed = false;
        r->fenced = false;
        r->warm = false;
        r->t_restarted = r->t_rewired = 0;
        r->next_try_ms = now + sd_backoff_ms(d);
        clear_dev_flags(d, false);
        sd_persist_save_rec(d);
        sd_publish(d);
        return;
    }
    memset(r, 0, sizeof(*r));
    r->id = ++d->next_rec_id;
    r->kind = kind;
    r->phase = PH_RESTART;
    snprintf(r->reason, sizeof(r->reason), "%s", why);
    r->old_domid = d->srv.domid;
    r->t_detect = now;
    r->t_evidence = evidence_ms && evidence_ms <= now ? evidence_ms : now;
    if (kind == RK_PLANNED) {
        sd_budget_reset(&d->srv.budget); /* the operator takes the budget into their hands */
        if (d->sb.state == SB_FAILED) {  /* ... and the standby's */
            d->sb.state = SB_NONE;
            sd_budget_reset(&d->sb.inst.budget);
            d->sb.next_try_ms = 0;
        }
        r->next_try_ms = now;
    } else if (kind == RK_START) {
        r->next_try_ms = now;
    } else {
        r->next_try_ms = now + sd_backoff_ms(d);
    }
    d->state = DS_RECOVERING;
    d->srv.error[0] = 0;
    if ((unsigned)src < SRC_COUNT && kind != RK_START)
        d->n_detect[src]++;
    clear_dev_flags(d, false);
    if (kind == RK_START)
        sd_dlog(d, "starting the driver domain: %s", why);
    else
        sd_dlog(d,
                "recovery %u: detect: %s; %u devices of %u guests to rewire (%llu ms after "
                "the first sign)",
                r->id, why, paired_count(d), sd_record_guests(d, NULL),
                (unsigned long long)(r->t_detect - r->t_evidence));
    sd_persist_save_rec(d);
    /* The state is published as the recovery goes on (created, or a cold
     * restart's step_restart): with a standby to promote at once, not
     * before the switch - a round trip the guests would wait for. */
    if (!sd_standby_ready(d) || r->next_try_ms > now)
        sd_publish(d);
}

static void step_rewire(struct sd_dom *d, uint64_t now);

/* The new domain exists (created, adopted, or a promoted standby): on to rewiring. */
static void created(struct sd_dom *d, unsigned domid, bool warm)
{
    struct sd_recovery *r = &d->rec;
    uint64_t now = sd_now();
    if (r->kind != RK_START)
        note_restart(d, now); /* a first start is not a restart */
    r->attempts++;
    r->new_domid = domid;
    r->warm = warm;
    r->t_restarted = now;
    r->phase = PH_REWIRE;
    d->srv.domid = domid;
    d->srv.hb.start_ms = now;
    d->srv.boosted = !warm && d->conf->boot_weight; /* a standby was never boosted */
    char hot[128] = "";
    if (warm && d->conf->standby) {
        unsigned up, n = sd_hot_count(d, domid, &up);
        snprintf(hot, sizeof(hot), " (hot: %u of %u devices connected to it, %u attached%s)", up,
                 paired_count(d), n, r->sb_looked ? "; seen running at the detection" : "");
    }
    sd_dlog(d, "recovery %u: restart: %s %u %s%s (attempt %u) - %llu ms", r->id,
            warm ? "standby domain" : "domain", domid, warm ? "promoted" : "created", hot,
            r->attempts, (unsigned long long)(now - r->t_detect));
    d->devs_dirty = true;
    /* A promoted standby already holds the guests' connections: switch them
     * now. Saving the state, watching the new domain, dropping the
     * standby's watches and publishing the state are file writes and round
     * trips (a few ms on xensim, more under load) the guests need not wait
     * for; the watches' first events re-read what the switch changed. A
     * shadowd killed before the save resumes the recovery from its restart
     * step: the standby is still what it promotes, and the rewire finds the
     * devices switched already (sd_rewire_dev, maybe_done). */
    if (warm) {
        step_rewire(d, now);
        /* Its watches as the standby, dropped only now: watched again as
         * the serving domain. */
        sd_store_watch_standby(d);
        struct sd_drv *drv = d->sd->drv[d->conf->driver];
        if (drv && d->ops->unwatch)
            d->ops->unwatch(drv, domid);
    }
    sd_persist_save_devs(d);
    sd_persist_save_rec(d);
    sd_store_watch_dom(d);
    sd_publish(d);
}

static void attempt_failed(struct sd_dom *d, const char *what, const char *err)
{
    uint64_t now = sd_now();
    note_restart(d, now); /* a failed start counts against the budget too */
    d->rec.attempts++;
    d->rec.next_try_ms = now + sd_backoff_ms(d);
    sd_dlog(d, "recovery %u: restart: %s failed: %s; next try in %llu ms", d->rec.id, what, err,
            (unsigned long long)(d->rec.next_try_ms - now));
}

void sd_recover_done_op(struct sd_dom *d, enum sd_drv_op op, int rc, unsigned domid,
                        const char *err)
{
    struct sd_recovery *r = &d->rec;
    if (d->state != DS_RECOVERING || r->phase != PH_RESTART || !r->op_pending)
        return;
    r->op_pending = false;
    if (op == SD_OP_DESTROY) {
        if (rc < 0) {
            attempt_failed(d, "destroying the old domain", err ? err : "?");
            return;
        }
        r->destroyed = true;
        r->next_try_ms = sd_now();
    } else if (rc < 0) {
        attempt_failed(d, "creating the domain", err ? err : "?");
    } else {
        created(d, domid, false);
    }
}

/* The failed domain out of the way before its successor serves: fenced
 * (fence.c) when a ready standby is to be promoted, else destroyed - which
 * may take a while (the driver's done() comes later). 0: done (r->fenced or
 * r->destroyed), 1: waiting for the driver, -1: failed (retried later). */
static int take_out_old(struct sd_dom *d, struct sd_drv *drv, bool fence_ok)
{
    struct sd_recovery *r = &d->rec;
    char err[256] = "";
    if (!r->old_domid) {
        r->destroyed = true;
        return 0;
    }
    struct sd_domstat st = r->old_st;
    if (!r->old_final && d->ops->info(drv, r->old_domid, &st, err, sizeof(err)) < 0) {
        attempt_failed(d, "looking at the old domain", err);
        return -1;
    }
    if (st.run == SD_RUN_GONE || (st.run == SD_RUN_DYING && r->teardown_until && !fence_ok)) {
        r->destroyed = true; /* gone, or going: its toolstack's destroy finishes it */
        return 0;
    }
    if (fence_ok) {
        char how[64];
        if (sd_fence(d, r->old_domid, &st, how, sizeof(how), err, sizeof(err)) == 0) {
            r->fenced = true;
            sd_dlog(d,
                    "recovery %u: fence: domain %u %s, %llu ms after the detection; destroyed "
                    "after the switch",
                    r->id, r->old_domid, how, (unsigned long long)(sd_now() - r->t_detect));
            return 0;
        }
        sd_dlog(d, "recovery %u: fence: domain %u: %s; destroying it before the promotion instead",
                r->id, r->old_domid, err);
    }
    int rc = d->ops->destroy(drv, r->old_domid, &d->srv, err, sizeof(err));
    if (rc < 0) {
        attempt_failed(d, "destroying the old domain", err);
        return -1;
    }
    if (rc == SD_DRV_PENDING) {
        r->op_pending = true;
        return 1;
    }
    r->destroyed = true;
    return 0;
}

/* A cold restart leaves the old domain to the toolstack destroying it (a
 * teardown, detect.c) until it is dying or gone - the look at every domain
 * that @releaseDomain brings sees that - or until teardown_until; its own
 * destroy would only wait for the toolstack's, and doubled the device
 * teardown (2.2-3.0 s from the detection to the create on Xen in QEMU,
 * against 0.1-0.4 s when the detection was the death). */
static bool teardown_wait(const struct sd_dom *d, uint64_t now)
{
    const struct sd_recovery *r = &d->rec;
    return r->teardown_until && now < r->teardown_until && !r->destroyed && !r->op_pending &&
           !sd_standby_ready(d) &&
           !(r->old_final && (r->old_st.run == SD_RUN_GONE || r->old_st.run == SD_RUN_DYING));
}

static void step_restart(struct sd_dom *d, uint64_t now)
{
    struct sd_recovery *r = &d->rec;
    struct sd_drv *drv = d->sd->drv[d->conf->driver];
    char err[256] = "";
    if (r->op_pending || now < r->next_try_ms || teardown_wait(d, now))
        return;
    if (!drv) {
        r->next_try_ms = now + STARTUP_RETRY_MS;
        return;
    }
    if (!sd_budget_ok(&d->srv.budget, d->conf, now)) {
        char why[200], w[32];
        sd_format_duration(w, sizeof(w), d->conf->restart_window_ms);
        sd_strfmt(why, sizeof(why), "restart budget exhausted: %u restarts within %s (%s)",
                  d->conf->restart_budget, w, r->reason);
        fail_dom(d, why);
        return;
    }
    /* One look at the standby serves the fence and the promotion: each
     * is a round trip to the driver on a failover's critical path. */
    bool fit = sd_standby_fit(d);
    if (!r->destroyed && !r->fenced && take_out_old(d, drv, fit) != 0)
        return;
    /* A standby: promoted instead of creating a domain, once the failed
     * domain is fenced or gone (never two backends serving one disk). */
    unsigned sb = fit ? sd_standby_take(d) : 0;
    if (sb) {
        if (r->fenced)
            sd_reap_arm(d, r->old_domid); /* destroyed once the rewire is written */
        created(d, sb, true);
        return;
    }
    sd_publish(d); /* recovering, if sd_recover_start left it for a promotion */
    if (r->fenced) {
        /* Fenced for a standby that turned out unfit: destroy the failed
         * domain before a cold start, as without a standby. */
        r->fenced = false;
        if (take_out_old(d, drv, false) != 0)
            return;
    }
    /* A domain of our name left over (a restarted shadowd, an operator)? */
    char name[80];
    sd_inst_name(&d->srv, name, sizeof(name));
    unsigned other;
    if (d->ops->find(drv, name, &other, err, sizeof(err)) == 0) {
        struct sd_domstat st;
        if (d->ops->info(drv, other, &st, err, sizeof(err)) == 0 &&
            (st.run == SD_RUN_RUNNING || st.run == SD_RUN_PAUSED) && other != r->old_domid) {
            sd_dlog(d, "recovery %u: restart: adopting domain %u, already running under our name",
                    r->id, other);
            created(d, other, false);
            return;
        }
        if (d->ops->destroy(drv, other, &d->srv, err, sizeof(err)) < 0) {
            attempt_failed(d, "destroying a leftover domain of the same name", err);
            return;
        }
    }
    unsigned domid = 0;
    /* Where a cold restart's time goes (bench/README, "The timeline"): what
     * came before the create (backoff, the old domain's destroy), then the
     * create itself (shadowd-priv logs its driver call's own time). */
    sd_dlog(d, "recovery %u: restart: creating %s, %llu ms after the detection", r->id, name,
            (unsigned long long)(sd_now() - r->t_detect)); /* not now: a destroy came since */
    int rc = d->ops->create(drv, d->conf, name, true, &d->srv, &domid, err, sizeof(err));
    if (rc < 0)
        attempt_failed(d, "creating the domain", err);
    else if (rc == SD_DRV_PENDING)
        r->op_pending = true;
    else
        created(d, domid, false);
}

static void check_reconnect(struct sd_dom *d, struct sd_dev *v);

static void finish(struct sd_dom *d, const char *why_partial)
{
    struct sd_recovery *r = &d->rec;
    uint64_t now = sd_now();
    unsigned n = 0, ok = 0, stock = 0, stock_up = 0;
    for (unsigned i = 0; i < d->ndevs; i++) {
        struct sd_dev *v = d->devs[i];
        if (!v->rewired)
            continue;
        if (!v->shadow_aware) {
            /* Not waited for: connected now, or not (a stock frontend
             * rarely follows a backend that moved). */
            check_reconnect(d, v);
            stock++;
            stock_up += v->reconnected;
            continue;
        }
        n++;
        ok += v->reconnected;
    }
    char outcome[192], extra[96] = "";
    if (stock)
        snprintf(extra, sizeof(extra),
                 "; %u stock frontend%s rewired, not waited for (%u connected)", stock,
                 stock == 1 ? "" : "s", stock_up);
    snprintf(outcome, sizeof(outcome), "%u of %u devices reconnected%s%s%s", ok, n, extra,
             why_partial ? "; " : "", why_partial ? why_partial : "");
    if (r->kind != RK_START || n || stock)
        sd_dlog(d, "recovery %u: reconnect: %s - %llu ms", r->id, outcome,
                (unsigned long long)(now - r->t_rewired));
    char phases[160], hot[64] = "";
    record_history(d, ok == n, outcome, now, phases, sizeof(phases));
    if (r->warm) {
        unsigned nh = 0, nr = 0;
        for (unsigned i = 0; i < d->ndevs; i++) {
            nr += d->devs[i]->rewired;
            nh += d->devs[i]->rewired && d->devs[i]->hot_switched;
        }
        snprintf(hot, sizeof(hot), ", standby promoted (hot: %u of %u devices switched)", nh, nr);
    }
    if (r->kind != RK_START) {
        d->n_recoveries++;
        snprintf(d->last_recovery, sizeof(d->last_recovery), "%s", phases);
        sd_dlog(d, "recovery %u: done in %llu ms (%s), domain %u -> %u after %u restart(s)%s%s",
                r->id, (unsigned long long)(now - r->t_evidence), phases, r->old_domid,
                r->new_domid, r->attempts, hot, ok == n ? "" : "; PARTIAL");
    } else {
        sd_dlog(d, "driver domain %u is up", d->srv.domid);
    }
    /* What the frontends reported during the recovery is answered. */
    for (unsigned i = 0; i < d->ndevs; i++) {
        struct sd_dev *v = d->devs[i];
        char *rep = xsu_read(d->sd->xs, XBT_NULL, v->fe_path, USK_FE_REPORT, SD_REPORT_MAX);
        snprintf(v->report, sizeof(v->report), "%s", rep ? rep : "");
        free(rep);
        v->report_due = false;
    }
    d->nreporters = 0;
    clear_dev_flags(d, true);
    sd_hot_reset(d); /* the switch took the connections it used; others may be stale */
    d->state = DS_UP;
    d->up_since = now;
    d->scan_due = true;
    d->devs_dirty = true;
    sd_persist_drop_rec(d);
    sd_persist_save_devs(d);
    sd_publish(d);
    sd_detect_settle(d); /* boot-weight over, now that the guests are served */
}

/* Every shadow-aware frontend back (or given up). A frontend that is not
 * shadow-aware (no FE/shadow/state: a stock driver on a guest sharing the
 * domain) holds nothing open: it is rewired, and finish() reports it apart. */
static bool all_reconnected(const struct sd_dom *d)
{
    for (unsigned i = 0; i < d->ndevs; i++) {
        const struct sd_dev *v = d->devs[i];
        if (v->rewired && v->shadow_aware && !v->reconnected && !v->gave_up)
            return false;
    }
    return true;
}

static void check_reconnect(struct sd_dom *d, struct sd_dev *v)
{
    if (!v->rewired || v->reconnected || v->gave_up)
        return;
    if (sd_rewire_reconnected(d, v, d->rec.new_domid)) {
        v->reconnected = true;
        sd_dlog(d, "recovery %u: %s %u of guest %u reconnected%s%s", d->rec.id, v->type, v->devid,
                v->fe, v->fe_last[0] ? ": " : "", v->fe_last);
    }
}

void sd_recover_fe_event(struct sd_dom *d, struct sd_dev *v)
{
    if (d->state != DS_RECOVERING || d->rec.phase != PH_RECONNECT)
        return;
    check_reconnect(d, v);
    if (all_reconnected(d))
        finish(d, NULL);
}

/* A chunk of devices rewired on xspool's connections at once. */
struct rewire_job {
    struct sd_dom *d;
    struct sd_dev *v[SD_REWIRE_CHUNK];
    int rc[SD_REWIRE_CHUNK];
};

static void rewire_one(struct xs_handle *xs, unsigned i, void *arg)
{
    struct rewire_job *j = arg;
    struct sd_dev *v = j->v[i];
    j->rc[i] =
        sd_rewire_dev(xs, j->d, v, j->d->rec.new_domid, j->d->rec.resumed || v->rewire_tries > 0);
}

static bool rewire_wanted(const struct sd_dev *v)
{
    return v->paired && !v->rewired && v->rewire_tries < REWIRE_MAX_TRIES;
}

/* Every paired device rewired (or given up on after REWIRE_MAX_TRIES), a
 * chunk a loop turn. The devices of a chunk are rewired at once, each its
 * own transaction on one of xspool's connections: no guest's device waits
 * for the others' round trips, and one that fails is tried again later
 * without holding up the rest. */
static void step_rewire(struct sd_dom *d, uint64_t now)
{
    struct sd_recovery *r = &d->rec;
    if (now < r->next_try_ms)
        return;
    struct rewire_job j = {.d = d};
    unsigned nj = 0;
    for (unsigned i = 0; i < d->ndevs && nj < SD_REWIRE_CHUNK; i++)
        if (rewire_wanted(d->devs[i]))
            j.v[nj++] = d->devs[i];
    if (nj)
        sd_xspool_run(d->sd, nj, rewire_one, &j);
    bool retry = false;
    for (unsigned i = 0; i < nj; i++) {
        struct sd_dev *v = j.v[i];
        if (j.rc[i] >= 0) {
            v->rewired = true;
            d->devs_dirty = true;
        } else if (++v->rewire_tries < REWIRE_MAX_TRIES) {
            retry = true;
        } else {
            sd_dlog(d, "recovery %u: rewire: giving up on %s %u of guest %u after %u tries", r->id,
                    v->type, v->devid, v->fe, v->rewire_tries);
        }
    }
    bool left = false;
    for (unsigned i = 0; i < d->ndevs && !left; i++)
        left = rewire_wanted(d->devs[i]);
    if (left) {
        if (retry)
            r->next_try_ms = sd_now() + REWIRE_RETRY_MS;
        sd_persist_save_devs(d); /* a promotion's domain ids (created saves them after) */
        sd_persist_save_rec(d);  /* what is rewired so far */
        return;
    }
    now = sd_now(); /* the rewire phase ends after its writes, not when this turn began */
    unsigned n = 0, hot = 0;
    for (unsigned i = 0; i < d->ndevs; i++) {
        n += d->devs[i]->rewired;
        hot += d->devs[i]->rewired && d->devs[i]->hot_switched;
    }
    r->t_rewired = now;
    r->phase = PH_RECONNECT;
    r->deadline = now + d->conf->reconnect_timeout_ms;
    char how[64] = "";
    if (r->warm)
        snprintf(how, sizeof(how), " (hot: %u of %u devices switched)", hot, n);
    if (r->kind != RK_START || n)
        sd_dlog(d, "recovery %u: rewire: %u devices rewired to domain %u - %llu ms%s", r->id, n,
                r->new_domid, (unsigned long long)(now - r->t_restarted), how);
    d->devs_dirty = true;
    sd_persist_save_rec(d);
    sd_publish(d);
    for (unsigned i = 0; i < d->ndevs; i++)
        check_reconnect(d, d->devs[i]);
    if (all_reconnected(d))
        finish(d, NULL);
}

void sd_recover_tick(struct sd_dom *d, uint64_t now)
{
    if (d->state != DS_RECOVERING)
        return;
    switch (d->rec.phase) {
    case PH_RESTART:
        step_restart(d, now);
        break;
    case PH_REWIRE:
        step_rewire(d, now);
        break;
    case PH_RECONNECT:
        if (now >= d->rec.deadline) {
            char w[32], why[96];
            sd_format_duration(w, sizeof(w), d->conf->reconnect_timeout_ms);
            snprintf(why, sizeof(why), "the others did not within reconnect-timeout %s", w);
            finish(d, why);
            break;
        }
        for (unsigned i = 0; i < d->ndevs; i++)
            check_reconnect(d, d->devs[i]);
        if (all_reconnected(d))
            finish(d, NULL);
        break;
    }
}

uint64_t sd_dom_wake(const struct sd_dom *d)
{
    uint64_t w = UINT64_MAX, now = sd_now();
#define AT(t)                                                                                      \
    do {                                                                                           \
        if ((t) < w)                                                                               \
            w = (t);                                                                               \
    } while (0)
    if (d->startup_pending)
        AT(d->startup_retry_ms);
    if (d->state == DS_FAILED) {
        AT(sd_standby_wake(d));
        AT(sd_reap_wake(d));
        return w;
    }
    if (d->scan_due)
        AT(now);
    if (d->state == DS_UP)
        AT(d->next_scan_ms);
    const struct sd_domconf *c = d->conf;
    bool hb_active = c->heartbeat_timeout_ms && d->srv.domid &&
                     (d->state == DS_UP || d->rec.phase != PH_RESTART);
    if (hb_active)
        AT(d->srv.hb.seen ? d->srv.hb.change_ms + c->heartbeat_timeout_ms + 1
                          : d->srv.hb.start_ms + c->boot_timeout_ms + 1);
    for (unsigned i = 0; i < d->ndevs; i++)
        if (d->devs[i]->report_due)
            AT(d->devs[i]->last_report_ms + d->sd->conf->report_interval_ms);
    if (d->state == DS_UP && d->srv.budget.streak)
        AT(d->up_since + c->stable_ms);
    AT(sd_detect_lone_wake(d));
    AT(sd_detect_pause_wake(d));
    if (d->state == DS_RECOVERING) {
        switch (d->rec.phase) {
        case PH_RESTART:
            if (!d->rec.op_pending)
                AT(teardown_wait(d, now) ? d->rec.teardown_until : d->rec.next_try_ms);
            break;
        case PH_REWIRE:
            AT(d->rec.next_try_ms > now ? d->rec.next_try_ms : now);
            break;
        case PH_RECONNECT:
            AT(d->rec.deadline);
            AT(now + RECONNECT_POLL_MS);
            break;
        }
    }
    AT(sd_standby_wake(d));
    AT(sd_reap_wake(d));
    AT(sd_hot_wake(d));
    if (sd_rewire_perms_due(d))
        AT(now);
#undef AT
    return w;
}

/* ---- startup: resume, adopt, or start ---- */

static void resume(struct sd_dom *d)
{
    struct sd_recovery *r = &d->rec;
    struct sd_drv *drv = d->sd->drv[d->conf->driver];
    char err[256];
    uint64_t now = sd_now();
    d->state = DS_RECOVERING;
    r->resumed = true;
    if (r->id >= d->next_rec_id)
        d->next_rec_id = r->id;
    sd_dlog(d,
            "resuming recovery %u (%s) at %s, old domain %u, new domain %u: shadowd was "
            "restarted",
            r->id, r->reason, sd_phase_name(r->phase), r->old_domid, r->new_domid);
    if (r->phase == PH_RESTART) {
        r->destroyed = false;
        r->op_pending = false;
        r->next_try_ms = now;
        d->srv.domid = r->old_domid;
        sd_publish(d);
        return;
    }
    struct sd_domstat st;
    if (d->ops->info(drv, r->new_domid, &st, err, sizeof(err)) < 0 ||
        (st.run != SD_RUN_RUNNING && st.run != SD_RUN_PAUSED)) {
        sd_dlog(d, "recovery %u: new domain %u is no longer running; restarting again", r->id,
                r->new_domid);
        r->old_domid = r->new_domid;
        r->new_domid = 0;
        r->phase = PH_RESTART;
        r->destroyed = false;
        r->next_try_ms = now + sd_backoff_ms(d);
        clear_dev_flags(d, false);
        d->srv.domid = r->old_domid;
        sd_persist_save_rec(d);
        sd_publish(d);
        return;
    }
    d->srv.domid = r->new_domid;
    d->srv.hb.start_ms = now;
    sd_store_watch_dom(d);
    if (r->phase == PH_REWIRE) {
        r->next_try_ms = now; /* rewiring is idempotent: done devices are skipped */
    } else {
        r->deadline = now + d->conf->reconnect_timeout_ms;
        for (unsigned i = 0; i < d->ndevs; i++)
            if (!d->devs[i]->rewired && d->devs[i]->paired) {
                /* rewired before the crash, its baseline not saved */
                d->devs[i]->rewired = true;
                d->devs[i]->base_unknown = true;
            }
    }
    sd_publish(d);
}

static void startup_serving(struct sd_dom *d)
{
    struct sd_drv *drv = d->sd->drv[d->conf->driver];
    char err[256] = "", name[80];
    uint64_t now = sd_now();
    sd_inst_name(&d->srv, name, sizeof(name));
    d->startup_pending = false;
    if (!drv) {
        d->startup_pending = true;
        d->startup_retry_ms = now + STARTUP_RETRY_MS;
        return;
    }
    bool found_rec = false;
    if (sd_persist_load_rec(d, &found_rec) == 0 && found_rec) {
        resume(d);
        return;
    }
    unsigned domid;
    if (d->ops->find(drv, name, &domid, err, sizeof(err)) < 0) {
        if (errno != ENOENT) {
            sd_dlog(d, "cannot look for the domain: %s; retrying", err);
            d->startup_pending = true;
            d->startup_retry_ms = now + STARTUP_RETRY_MS;
            return;
        }
        unsigned recorded = d->srv.domid;
        d->srv.domid = 0;
        if (paired_count(d))
            sd_recover_start(d, RK_FAILURE, SRC_DEATH, now,
                             "domain %u is gone (found at shadowd start)", recorded);
        else
            sd_recover_start(d, RK_START, SRC_PLANNED, now, "not running");
        return;
    }
    struct sd_domstat st;
    if (d->ops->info(drv, domid, &st, err, sizeof(err)) < 0) {
        sd_dlog(d, "cannot look at domain %u: %s; retrying", domid, err);
        d->startup_pending = true;
        d->startup_retry_ms = now + STARTUP_RETRY_MS;
        return;
    }
    if (st.run != SD_RUN_RUNNING && st.run != SD_RUN_PAUSED) {
        d->srv.domid = domid;
        if (paired_count(d))
            sd_recover_start(d, RK_FAILURE, SRC_DEATH, st.shutdown_ms,
                             "domain %u found shut down at shadowd start (reason %d)", domid,
                             st.reason);
        else
            sd_recover_start(d, RK_START, SRC_PLANNED, now,
                             "domain %u found shut down; starting afresh", domid);
        return;
    }
    if (d->srv.domid && d->srv.domid != domid && paired_count(d)) {
        /* Replaced while shadowd was away: its new incarnation has no backends. */
        unsigned old = d->srv.domid;
        d->srv.domid = domid;
        sd_recover_start(d, RK_FAILURE, SRC_DEATH, now,
                         "domain %u was replaced by domain %u while shadowd was down", old, domid);
        d->rec.old_domid = old;
        d->rec.destroyed = true;
        created(d, domid, false);
        return;
    }
    d->srv.domid = domid;
    d->state = DS_UP;
    d->up_since = now;
    d->srv.hb.start_ms = now;
    /* An earlier shadowd may have died before it settled the domain's
     * weight: settling is idempotent. */
    d->srv.boosted = d->conf->boot_weight != 0;
    d->scan_due = true;
    d->devs_dirty = true;
    sd_store_watch_dom(d);
    sd_dlog(d, "adopted running domain %u (%u recorded devices)", domid, paired_count(d));
    sd_publish(d);
}

void sd_recover_startup(struct sd_dom *d)
{
    d->perms_unknown = true;
    startup_serving(d);
    if (!d->startup_pending)
        sd_standby_startup(d); /* after: it must not take the serving domain for a standby */
}
