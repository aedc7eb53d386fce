/* detect.c - deciding that a driver domain has failed (DESIGN.md step 1):
 *
 *  - death: @releaseDomain (and the driver's own events) make shadowd look
 *    at each domain; shut down for any reason, dying or gone is a failure;
 *  - hang: the agent's heartbeat (USK_DRV_HEARTBEAT) has not changed for
 *    heartbeat-timeout, or never appeared within boot-timeout of a start.
 *    Only changes count: values are not comparable across domains;
 *  - teardown: the domain's console dir (which the toolstack writes at its
 *    create and removes when it destroys it) went away while the driver
 *    says the domain is paused (dying or gone is a death anyway). `xl destroy` (libxl's
 *    destroy, which libvirt's libxl driver uses too) pauses the domain,
 *    then removes its own devices - console first, then its vifs and vbds
 *    with their hotplug scripts - then its xenstore dir, then destroys it:
 *    @releaseDomain comes 1.1-1.5 s after the pause under emulation, the
 *    console's removal 0.2-0.3 s after it. No pause-timeout: nothing but a
 *    destroy removes a paused domain's console;
 *  - pause: the heartbeat has not changed for pause-timeout and the driver
 *    says the domain is paused. A paused domain runs no vcpu, so its
 *    heartbeat cannot move however fast the host is: no need to wait for
 *    heartbeat-timeout, which must cover the worst scheduling delay of a
 *    domain that does run (15 s under emulation). Someone's `xl pause` of a
 *    driver domain is a hang of every device it serves;
 *  - a frontend's report (USK_FE_REPORT): guest input, so bounded, parsed,
 *    acted on at most once per report-interval per device. A guest may get
 *    a domain that serves only it restarted, report-budget times per
 *    report-window; a domain shared by several guests needs reports from
 *    two of them within corroboration-window (death and heartbeat loss need
 *    no corroboration), or the domain's own word for it: a lone report is
 *    corroborated if the domain is paused, or if its agent's heartbeat has
 *    not moved since before the report for SD_HB_SILENT_INTERVALS of its
 *    intervals (at least SD_HB_SILENT_MIN_MS) - hang detection at the speed
 *    of the frontends' deadlines rather than heartbeat-timeout's, which must
 *    cover the host's worst scheduling delay. The reporting guest's
 *    report-budget applies. */
#define _GNU_SOURCE
#include "detect.h"

#include "dom.h"
#include "drv.h"
#include "instance.h"
#include "log.h"
#include "record.h"
#include "recover.h"
#include "standby.h"

#include "sd_text.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The serving domain is one to look at: not failed for good, not starting,
 * not being replaced already. */
static bool checkable(const struct sd_dom *d)
{
    if (!d->sd->drv[d->conf->driver] || !d->srv.domid || d->state == DS_FAILED ||
        d->startup_pending)
        return false;
    if (d->state == DS_RECOVERING && d->rec.phase == PH_RESTART)
        return d->rec.teardown_until && !d->rec.destroyed && d->rec.old_domid == d->srv.domid;
    return true;
}

/* How long a cold restart leaves the old domain to the toolstack that is
 * destroying it (`xl destroy` took 1.1-1.5 s from its pause to the
 * domain's release on Xen in QEMU) before destroying it itself. */
#define SD_TEARDOWN_WAIT_MS 10000

/* What a look at the serving domain saw: a recovery if it is dead. look_id:
 * the look at every domain it came from. */
static void judge_dom(struct sd_dom *d, const struct sd_domstat *st, unsigned look_id)
{
    uint64_t now = sd_now();
    bool console_gone = d->console_gone;
    d->console_gone = false;
    switch (st->run) {
    case SD_RUN_RUNNING:
        if (console_gone && d->state == DS_UP)
            sd_dlog(d, "domain %u: its console dir went away while it runs: not a failure",
                    d->srv.domid);
        return;
    case SD_RUN_PAUSED: /* a pause longer than heartbeat-timeout is a hang */
        if (console_gone && d->state == DS_UP) {
            sd_recover_start(d, RK_FAILURE, SRC_PAUSE, now,
                             "domain %u: paused and its console removed (a toolstack destroys it)",
                             d->srv.domid);
            struct sd_recovery *r = &d->rec;
            if (d->state == DS_RECOVERING && r->old_domid == d->srv.domid) {
                r->teardown_until = now + SD_TEARDOWN_WAIT_MS;
                r->look_id = look_id; /* the standby is in the same look */
                r->old_st = *st;      /* paused: fenced, for a promotion */
                r->old_final = true;
            }
        }
        return;
    case SD_RUN_GONE:
        sd_recover_start(d, RK_FAILURE, SRC_DEATH, now, "domain %u is gone", d->srv.domid);
        break;
    case SD_RUN_SHUTDOWN:
    case SD_RUN_DYING:
        sd_recover_start(d, RK_FAILURE, SRC_DEATH, st->shutdown_ms ? st->shutdown_ms : now,
                         "domain %u shut down (reason %s)", d->srv.domid,
                         sd_reason_name(st->reason));
        break;
    }
    /* What was seen is final: the recovery need not ask again. */
    struct sd_recovery *r = &d->rec;
    if (d->state == DS_RECOVERING && r->phase == PH_RESTART && !r->attempts &&
        r->old_domid == d->srv.domid) {
        r->old_st = *st;
        r->old_final = true;
        r->look_id = look_id;
    }
}

/* A death somewhere: which one @releaseDomain does not say, so every serving
 * domain and every standby is looked at - in one driver call per driver
 * kind, not one each (on real Xen each call waits behind everyone else's
 * reaction to the death: 15-120 ms apiece, measured) - once per loop turn,
 * however many events asked (the driver's own death event and
 * @releaseDomain arrive together). The promotion that follows uses what
 * this look saw of the standby (sd_standby_fit). */
static void look_all(struct sd *sd)
{
    unsigned look_id = ++sd->look_id ? sd->look_id : ++sd->look_id; /* never 0 */
    size_t max = 2 * (size_t)sd->ndoms + 1;
    unsigned *domids = calloc(max, sizeof(*domids)), *of = calloc(max, sizeof(*of));
    struct sd_domstat *st = calloc(max, sizeof(*st));
    if (!domids || !of || !st) {
        sd_log("looking at the domains: out of memory");
        goto out;
    }
    for (int k = 0; k < SD_DRIVER_KINDS; k++) {
        struct sd_drv *drv = sd->drv[k];
        const struct sd_drv_ops *ops = NULL;
        unsigned n = 0;
        if (!drv)
            continue;
        /* of[j]: the domain's index, times two, plus one for its standby. */
        for (unsigned i = 0; i < sd->ndoms; i++) {
            struct sd_dom *d = &sd->doms[i];
            if ((int)d->conf->driver != k)
                continue;
            ops = d->ops;
            if (checkable(d)) {
                of[n] = 2 * i;
                domids[n++] = d->srv.domid;
            }
            if (sd_standby_lookable(d)) {
                of[n] = 2 * i + 1;
                domids[n++] = d->sb.inst.domid;
            }
        }
        char err[256];
        if (!n)
            continue;
        if (sd_drv_look(ops, drv, domids, n, st, err, sizeof(err)) < 0) {
            sd_log("cannot look at the %s domains: %s", sd_driver_name((enum sd_driver_kind)k),
                   err);
            continue;
        }
        /* Each domain's serving domain before its standby, as collected. */
        for (unsigned j = 0; j < n; j++) {
            struct sd_dom *d = &sd->doms[of[j] / 2];
            if (of[j] % 2)
                sd_standby_seen(d, &st[j], look_id);
            else
                judge_dom(d, &st[j], look_id);
        }
    }
out:
    free(domids);
    free(of);
    free(st);
}

void sd_detect_release(struct sd *sd)
{
    sd->look_due = true;
}

void sd_detect_changed(struct sd *sd, unsigned domid)
{
    for (unsigned i = 0; i < sd->ndoms; i++)
        if (sd->doms[i].srv.domid == domid || sd->doms[i].sb.inst.domid == domid)
            sd->look_due = true;
}

void sd_detect_look(struct sd *sd)
{
    if (!sd->look_due)
        return;
    sd->look_due = false;
    look_all(sd);
}

/* boot-weight: the domain's kernel and agent are up and, in a recovery, its
 * devices back, so it goes back to its config's weight and stops
 * outweighing dom0 and the guests. A recovery's settle waits for its end:
 * the request is a round trip through shadowd-priv (200 ms on the system
 * tier: the xl config is read again) that the reconnects need not wait
 * for, and the new domain's backends serve the replay at the boost. */
void sd_detect_settle(struct sd_dom *d)
{
    struct sd_drv *drv = d->sd->drv[d->conf->driver];
    char err[256];
    if (!d->srv.boosted || !drv || !d->ops->settle) /* boosted: boot_weight set */
        return;
    d->srv.boosted = false;
    if (d->ops->settle(drv, d->conf, d->srv.domid, err, sizeof(err)) < 0)
        sd_dlog(d, "domain %u: its weight not settled (it keeps boot-weight %u): %s", d->srv.domid,
                d->conf->boot_weight, err);
    else
        sd_dlog(d, "domain %u: boot-weight %u over, its config's weight now", d->srv.domid,
                d->conf->boot_weight);
}

void sd_detect_heartbeat(struct sd_dom *d)
{
    if (!d->srv.hb.path[0])
        return;
    uint64_t now = sd_now();
    bool first = !d->srv.hb.seen;
    if (sd_inst_heartbeat(&d->srv, d->sd->xs, now) != 1 || !first)
        return;
    sd_dlog(d, "domain %u: agent heartbeat seen, %llu ms after %s", d->srv.domid,
            (unsigned long long)(now - d->srv.hb.start_ms),
            d->state == DS_UP ? "shadowd started watching" : "its start");
    if (d->state != DS_RECOVERING)
        sd_detect_settle(d); /* else at the recovery's end (recover.c) */
}

void sd_detect_console(struct sd_dom *d)
{
    struct xs_handle *xs = d->sd->xs;
    unsigned n = 0;
    char **ents = xs ? xs_directory(xs, XBT_NULL, d->console_path, &n) : NULL;
    bool present = ents || errno != ENOENT;
    free(ents);
    if (present || !d->console_seen) {
        d->console_seen = d->console_seen || present;
        return; /* it exists (or never did: a domain without one, xensim's) */
    }
    d->console_seen = false; /* once per domain */
    if (!checkable(d) || d->state != DS_UP)
        return;
    /* Judged by a look at every domain (judge_dom), which sees the standby
     * too: one driver call before a promotion, not two. */
    d->console_gone = true;
    d->sd->look_due = true;
}

/* How often a domain whose heartbeat is still but which runs is asked again. */
#define SD_PAUSE_POLL_MS 500

uint64_t sd_detect_pause_wake(const struct sd_dom *d)
{
    const struct sd_heartbeat *hb = &d->srv.hb;
    if (!d->conf->pause_timeout_ms || d->state != DS_UP || !d->srv.domid || !hb->seen)
        return UINT64_MAX;
    uint64_t t = hb->change_ms + d->conf->pause_timeout_ms;
    return t > d->pause_next_ms ? t : d->pause_next_ms;
}

static void check_paused(struct sd_dom *d, uint64_t now)
{
    struct sd_drv *drv = d->sd->drv[d->conf->driver];
    struct sd_domstat st;
    char err[256];
    d->pause_next_ms = now + SD_PAUSE_POLL_MS;
    if (!drv || d->ops->info(drv, d->srv.domid, &st, err, sizeof(err)) < 0 ||
        st.run != SD_RUN_PAUSED)
        return; /* gone or shut down: the death path has it */
    sd_recover_start(d, RK_FAILURE, SRC_PAUSE, d->srv.hb.change_ms,
                     "domain %u: paused, its heartbeat still for %llu ms", d->srv.domid,
                     (unsigned long long)(now - d->srv.hb.change_ms));
}

#define SD_HB_SILENT_INTERVALS 3
#define SD_HB_SILENT_MIN_MS    300

/* How long the heartbeat must stay still, since before a lone report, to
 * corroborate it; 0 if it cannot (no two heartbeats seen yet). */
static uint64_t hb_silence_needed(const struct sd_dom *d)
{
    const struct sd_heartbeat *hb = &d->srv.hb;
    if (!hb->seen || !hb->interval_ms || !d->conf->heartbeat_timeout_ms)
        return 0;
    uint64_t t = SD_HB_SILENT_INTERVALS * hb->interval_ms;
    return t < SD_HB_SILENT_MIN_MS ? SD_HB_SILENT_MIN_MS : t;
}

uint64_t sd_detect_lone_wake(const struct sd_dom *d)
{
    uint64_t need = hb_silence_needed(d);
    if (d->state != DS_UP || !d->nreporters || !need)
        return UINT64_MAX;
    return d->srv.hb.change_ms + need;
}

static void prune_reporters(struct sd_dom *d, uint64_t now)
{
    unsigned k = 0;
    for (unsigned i = 0; i < d->nreporters; i++)
        if (d->reporters[i].at + d->sd->conf->corroboration_ms > now)
            d->reporters[k++] = d->reporters[i];
    d->nreporters = k;
}

static unsigned guest_triggers(struct sd_dom *d, unsigned guest, uint64_t now)
{
    unsigned k = 0, n = 0;
    for (unsigned i = 0; i < d->ntriggers; i++) {
        if (d->guest_triggers[i].at + d->sd->conf->report_window_ms <= now)
            continue;
        d->guest_triggers[k++] = d->guest_triggers[i];
        n += d->guest_triggers[i].guest == guest;
    }
    d->ntriggers = k;
    return n;
}

/* A lone report waiting in a shared domain: does the domain itself say it
 * hangs? Then the recovery starts from the report. */
static void check_lone(struct sd_dom *d, uint64_t now)
{
    prune_reporters(d, now);
    if (d->state != DS_UP || !d->nreporters)
        return;
    struct sd_reporter first = d->reporters[0];
    char how[96] = "";
    struct sd_drv *drv = d->sd->drv[d->conf->driver];
    struct sd_domstat st;
    char err[256];
    uint64_t need = hb_silence_needed(d);
    if (drv && d->ops->info(drv, d->srv.domid, &st, err, sizeof(err)) == 0 &&
        st.run == SD_RUN_PAUSED)
        snprintf(how, sizeof(how), "the domain is paused");
    else if (need && d->srv.hb.change_ms <= first.at && now >= d->srv.hb.change_ms + need)
        snprintf(how, sizeof(how), "its heartbeat still for %llu ms (every %llu ms before)",
                 (unsigned long long)(now - d->srv.hb.change_ms),
                 (unsigned long long)d->srv.hb.interval_ms);
    if (!how[0])
        return;
    if (guest_triggers(d, first.guest, now) >= d->sd->conf->report_budget) {
        d->n_reports_ignored++;
        sd_dlog(d, "%s, and %s, but guest %u has used its budget of report-triggered recoveries",
                d->lone_why, how, first.guest);
        d->nreporters = 0;
        return;
    }
    if (d->ntriggers < SD_MAX_RESTARTS)
        d->guest_triggers[d->ntriggers++] = (struct sd_reporter){first.guest, now};
    d->n_reports_accepted++;
    sd_recover_start(d, RK_FAILURE, SRC_REPORT, first.at, "%s; corroborated by the domain: %s",
                     d->lone_why, how);
}

static void process_report(struct sd_dom *d, struct sd_dev *v, uint64_t now)
{
    struct sd *sd = d->sd;
    v->report_due = false;
    v->last_report_ms = now;
    char *val = xsu_read(sd->xs, XBT_NULL, v->fe_path, USK_FE_REPORT, SD_REPORT_MAX);
    if (!val) {
        if (errno == EFBIG || errno == EINVAL) {
            d->n_reports_ignored++;
            sd_dlog(d, "guest %u: %s/%s is over %d bytes or holds a NUL; ignored", v->fe,
                    v->fe_path, USK_FE_REPORT, SD_REPORT_MAX);
        }
        return;
    }
    if (!strcmp(val, v->report)) {
        free(val);
        return; /* seen before */
    }
    snprintf(v->report, sizeof(v->report), "%s", val);
    d->devs_dirty = true;
    struct sd_report r;
    const char *why = NULL;
    int prc = sd_parse_report(val, &r, &why);
    free(val);
    if (prc < 0) {
        d->n_reports_ignored++;
        sd_dlog(d, "guest %u: malformed report on %s %u (%s); ignored", v->fe, v->type, v->devid,
                why);
        return;
    }
    if (d->state != DS_UP || !v->paired) {
        return; /* a recovery is already on its way: the report folds into it */
    }
    if (!sd_report_is_evidence(r.kind)) {
        sd_dlog(d, "guest %u reports %s on %s %u: %s (no action: the device came back)", v->fe,
                sd_report_kind_name(r.kind), v->type, v->devid, r.detail);
        return;
    }
    unsigned only = 0, guests = sd_record_guests(d, &only);
    if (guests <= 1) {
        unsigned used = guest_triggers(d, v->fe, now);
        if (used >= sd->conf->report_budget) {
            char w[32];
            d->n_reports_ignored++;
            sd_format_duration(w, sizeof(w), sd->conf->report_window_ms);
            sd_dlog(d,
                    "guest %u reports %s on %s %u, but has used its budget of %u "
                    "report-triggered recoveries per %s; ignored",
                    v->fe, sd_report_kind_name(r.kind), v->type, v->devid, sd->conf->report_budget,
                    w);
            return;
        }
        if (d->ntriggers < SD_MAX_RESTARTS)
            d->guest_triggers[d->ntriggers++] = (struct sd_reporter){v->fe, now};
        d->n_reports_accepted++;
        sd_recover_start(d, RK_FAILURE, SRC_REPORT, now,
                         "guest %u, its only guest, reports %s on %s %u: %s", v->fe,
                         sd_report_kind_name(r.kind), v->type, v->devid, r.detail);
        return;
    }
    prune_reporters(d, now);
    unsigned i = 0;
    while (i < d->nreporters && d->reporters[i].guest != v->fe)
        i++;
    if (i == d->nreporters && d->nreporters < SD_MAX_REPORTERS)
        d->reporters[d->nreporters++] = (struct sd_reporter){v->fe, now};
    if (d->nreporters >= 2) {
        char who[128] = "";
        uint64_t first = now;
        for (unsigned k = 0; k < d->nreporters; k++) {
            size_t l = strlen(who);
            snprintf(who + l, sizeof(who) - l, "%s%u", k ? ", " : "", d->reporters[k].guest);
            if (d->reporters[k].at < first)
                first = d->reporters[k].at;
        }
        d->n_reports_accepted++;
        sd_recover_start(d, RK_FAILURE, SRC_REPORT, first,
                         "corroborated reports from guests %s (last: %s on %s %u: %s)", who,
                         sd_report_kind_name(r.kind), v->type, v->devid, r.detail);
        return;
    }
    char w[32];
    sd_format_duration(w, sizeof(w), sd->conf->corroboration_ms);
    snprintf(d->lone_why, sizeof(d->lone_why), "guest %u reports %s on %s %u: %.80s", v->fe,
             sd_report_kind_name(r.kind), v->type, v->devid, r.detail);
    sd_dlog(d,
            "guest %u reports %s on %s %u: %s; the domain serves %u guests, so this waits "
            "for corroboration (death, heartbeat loss, another guest's report within %s, or "
            "the domain paused or its heartbeat still)",
            v->fe, sd_report_kind_name(r.kind), v->type, v->devid, r.detail, guests, w);
    check_lone(d, now);
}

void sd_detect_report(struct sd_dom *d, struct sd_dev *v)
{
    uint64_t now = sd_now();
    if (v->last_report_ms && now < v->last_report_ms + d->sd->conf->report_interval_ms) {
        v->report_due = true; /* looked at when the interval is over */
        return;
    }
    process_report(d, v, now);
}

void sd_detect_tick(struct sd_dom *d, uint64_t now)
{
    const struct sd_domconf *c = d->conf;
    if (d->state == DS_FAILED || d->startup_pending)
        return;
    for (unsigned i = 0; i < d->ndevs; i++) {
        struct sd_dev *v = d->devs[i];
        if (v->report_due && now >= v->last_report_ms + d->sd->conf->report_interval_ms)
            process_report(d, v, now);
    }
    if (d->state == DS_UP && d->srv.budget.streak && now >= d->up_since + c->stable_ms) {
        sd_dlog(d, "domain %u up for %llu ms: restart backoff reset", d->srv.domid,
                (unsigned long long)(now - d->up_since));
        d->srv.budget.streak = 0;
        d->devs_dirty = true;
    }
    if (now >= sd_detect_lone_wake(d)) /* UINT64_MAX unless a lone report waits */
        check_lone(d, now);
    if (d->state == DS_UP && now >= sd_detect_pause_wake(d))
        check_paused(d, now);
    bool hb_active = c->heartbeat_timeout_ms && d->srv.domid &&
                     (d->state == DS_UP || d->rec.phase != PH_RESTART);
    if (!hb_active)
        return;
    if (d->srv.hb.seen && now > d->srv.hb.change_ms + c->heartbeat_timeout_ms) {
        sd_recover_start(d, RK_FAILURE, SRC_HEARTBEAT, d->srv.hb.change_ms,
                         "domain %u: heartbeat lost (unchanged for %llu ms)", d->srv.domid,
                         (unsigned long long)(now - d->srv.hb.change_ms));
    } else if (!d->srv.hb.seen && now > d->srv.hb.start_ms + c->boot_timeout_ms) {
        sd_recover_start(d, RK_FAILURE, SRC_HEARTBEAT, d->srv.hb.start_ms,
                         "domain %u: no heartbeat within boot-timeout (%llu ms)", d->srv.domid,
                         (unsigned long long)c->boot_timeout_ms);
    }
}
