/* fence.c - the failed domain at a promotion (DESIGN.md, "Standby"):
 * fenced before the standby takes over its devices, destroyed in the
 * background after they are switched, so that a failover does not wait for
 * a destroy (`xl destroy` takes seconds on real Xen).
 *
 * The fencing rule. A failed domain counts as fenced once its vcpus are
 * stopped: shut down (crash, watchdog: Xen stopped them for good), dying or
 * gone, or paused - shadowd pauses a running one through its driver (libxl
 * and libvirt pause its vcpus; xensim stops its processes with SIGSTOP, and
 * a process in a system call stops when the call returns). A paused domain
 * issues nothing new. What it had already handed off can still land after
 * the pause: a request its backend had submitted to the kernel or to a
 * device (an io_uring write, a DMA queue), or one on a ring to dom0's own
 * backend (a driver domain whose disk dom0 serves). shadowd does not wait
 * for those before the switch: it starts the destroy right after the
 * frontends are switched, in the same loop turn (sd_reap_tick runs after
 * the recovery's tick), and the domain is gone only once they have drained
 * (Xen keeps a dying domain until dom0's backends have unmapped its grants,
 * which they do as their requests complete; a killed process's io_uring
 * requests are completed or cancelled before it is reaped). A write that
 * lands in that window is one the frontend replays too (same sectors, same
 * data); it can do harm only if it lands after a newer write to the same
 * sectors was acknowledged - if it stays in flight through the switch, the
 * replay and a further request's round trip. dom0-tools/README.md ("Hot
 * standby") gives the figures and what is not done about it. */
#define _GNU_SOURCE
#include "fence.h"

#include "device.h"
#include "dom.h"
#include "log.h"

#include "understudy-keys.h"
#include "xs_txn.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REAP_RETRY_MS     1000 /* a destroy that failed: again after this, doubling */
#define REAP_RETRY_MAX_MS 30000

static struct sd_drv *drv_of(struct sd_dom *d)
{
    return d->sd->drv[d->conf->driver];
}

static bool stopped(const struct sd_domstat *st, char *how, size_t hlen)
{
    switch (st->run) {
    case SD_RUN_GONE:
        snprintf(how, hlen, "gone");
        return true;
    case SD_RUN_DYING:
        snprintf(how, hlen, "dying");
        return true;
    case SD_RUN_SHUTDOWN:
        snprintf(how, hlen, "shut down (%s)", sd_reason_name(st->reason));
        return true;
    case SD_RUN_PAUSED:
        snprintf(how, hlen, "already paused");
        return true;
    default:
        return false;
    }
}

int sd_fence(struct sd_dom *d, unsigned domid, const struct sd_domstat *known, char *how,
             size_t hlen, char *err, size_t elen)
{
    struct sd_drv *drv = drv_of(d);
    struct sd_domstat st = *known;
    if (!drv) {
        snprintf(err, elen, "no driver");
        return -1;
    }
    if (d->reap.inst.domid && d->reap.inst.domid != domid) {
        /* One fenced domain at a time: the next standby is booted only
         * once it is gone, so this is a promotion without a fresh standby. */
        snprintf(err, elen, "domain %u, fenced at the last promotion, is not destroyed yet",
                 d->reap.inst.domid);
        return -1;
    }
    /* Read by the caller a moment ago: a failover does not wait for a
     * second round trip to the driver (a crashed domain is fenced as is). */
    if (stopped(&st, how, hlen))
        return 0;
    uint64_t t0 = sd_now();
    if (d->ops->pause(drv, domid, err, elen) < 0) {
        /* It may have died meanwhile: that fences it too. */
        char e2[64];
        if (d->ops->info(drv, domid, &st, e2, sizeof(e2)) == 0 && stopped(&st, how, hlen))
            return 0;
        return -1;
    }
    snprintf(how, hlen, "paused (%llu ms)", (unsigned long long)(sd_now() - t0));
    return 0;
}

void sd_reap_arm(struct sd_dom *d, unsigned domid)
{
    struct sd_reap *r = &d->reap;
    r->inst.domid = domid;
    r->armed_ms = sd_now();
    r->next_try_ms = 0;
    r->tries = 0;
    r->op_pending = false;
    d->devs_dirty = true; /* "reap <domid>" in <name>.devices */
}

bool sd_fenced_all(const struct sd_dom *d)
{
    return !d->reap.inst.domid && (d->state != DS_RECOVERING || d->rec.destroyed);
}

struct fenced_txn {
    const struct sd_dev *v;
    char num[32];
};

/* FE/shadow/fenced := v's generation, if FE is still there (a write must
 * not create a dir the guest's toolstack removed) and it says less. */
static int write_fenced(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    struct fenced_txn *f = arg;
    char *b = xsu_read(xs, t, f->v->fe_path, USK_FE_GENERATION, 32);
    if (!b)
        return errno == ENOENT ? 0 : -1;
    free(b);
    uint64_t have = 0;
    if (xsu_read_u64(xs, t, f->v->fe_path, USK_FE_FENCED, UINT64_MAX, &have) == 0 &&
        have >= f->v->generation)
        return 0;
    return xsu_printf(xs, t, f->v->fe_path, USK_FE_FENCED, "%s", f->num);
}

/* The failed domain is gone, and with it what it had in flight: the disk
 * frontends may issue the writes they held (schema.md, FE/shadow/fenced). */
static void publish_fenced(struct sd_dom *d, unsigned gone)
{
    /* A recovery whose failed domain is the one just destroyed (the one
     * promoted over) has nothing else to wait for; another's failed domain
     * is still to go: its rewire or its reap says it. */
    if (d->reap.inst.domid ||
        (d->state == DS_RECOVERING && !d->rec.destroyed && d->rec.old_domid != gone))
        return;
    for (unsigned i = 0; i < d->ndevs; i++) {
        struct sd_dev *v = d->devs[i];
        if (!v->paired || !v->generation)
            continue;
        struct fenced_txn f = {.v = v};
        snprintf(f.num, sizeof(f.num), "%llu", (unsigned long long)v->generation);
        if (xsu_txn(d->sd->xs, write_fenced, &f, NULL) < 0)
            sd_dlog(d, "fence: write %s/%s: %s", v->fe_path, USK_FE_FENCED, strerror(errno));
    }
}

/* The destroy is done: the domain's backend dirs went with it, so the slots
 * whose backends they were can go now (hotsb.c). */
static void reaped(struct sd_dom *d)
{
    struct sd_reap *r = &d->reap;
    sd_dlog(d, "fence: failed domain %u destroyed, %llu ms after the promotion (in the background)",
            r->inst.domid, (unsigned long long)(sd_now() - r->armed_ms));
    unsigned gone = r->inst.domid;
    r->inst.domid = 0;
    r->op_pending = false;
    d->devs_dirty = true;
    for (unsigned i = 0; i < d->ndevs; i++)
        d->devs[i]->stale_due = true;
    d->hot_due = true;
    publish_fenced(d, gone);
}

static void retry_later(struct sd_dom *d, const char *err)
{
    struct sd_reap *r = &d->reap;
    uint64_t wait = REAP_RETRY_MS;
    for (unsigned i = 0; i < r->tries && wait < REAP_RETRY_MAX_MS; i++)
        wait *= 2;
    if (wait > REAP_RETRY_MAX_MS)
        wait = REAP_RETRY_MAX_MS;
    r->tries++;
    r->next_try_ms = sd_now() + wait;
    sd_dlog(d,
            "fence: destroying failed domain %u: %s; again in %llu ms (no new standby until "
            "it is gone)",
            r->inst.domid, err, (unsigned long long)wait);
}

/* Not before the frontends are switched: the rewire phase of the recovery
 * that promoted over it must be over. */
static bool may_destroy(const struct sd_dom *d)
{
    const struct sd_recovery *r = &d->rec;
    return d->state != DS_RECOVERING || r->old_domid != d->reap.inst.domid ||
           r->phase == PH_RECONNECT;
}

void sd_reap_tick(struct sd_dom *d, uint64_t now)
{
    struct sd_reap *r = &d->reap;
    struct sd_drv *drv = drv_of(d);
    if (!r->inst.domid || r->op_pending || now < r->next_try_ms || !drv || !may_destroy(d))
        return;
    if (r->inst.domid == d->srv.domid || r->inst.domid == d->sb.inst.domid) {
        /* Never: a domid recorded from before that now serves (a restarted
         * shadowd with a state dir of another run). */
        sd_dlog(d, "fence: domain %u is serving now; not destroying it", r->inst.domid);
        r->inst.domid = 0;
        d->devs_dirty = true;
        return;
    }
    char err[256] = "";
    int rc = d->ops->destroy(drv, r->inst.domid, &r->inst, err, sizeof(err));
    if (rc < 0)
        retry_later(d, err);
    else if (rc == SD_DRV_PENDING)
        r->op_pending = true;
    else
        reaped(d);
}

void sd_reap_done_op(struct sd_dom *d, enum sd_drv_op op, int rc, const char *err)
{
    struct sd_reap *r = &d->reap;
    if (!r->op_pending || op != SD_OP_DESTROY)
        return;
    r->op_pending = false;
    if (rc < 0)
        retry_later(d, err ? err : "?");
    else
        reaped(d);
}

uint64_t sd_reap_wake(const struct sd_dom *d)
{
    const struct sd_reap *r = &d->reap;
    if (!r->inst.domid || r->op_pending || !may_destroy(d))
        return UINT64_MAX;
    return r->next_try_ms;
}
