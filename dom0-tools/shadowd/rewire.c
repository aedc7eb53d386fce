/* rewire.c - pointing one recorded device at a new driver domain (DESIGN.md
 * steps 4 and 6): the new backend dir from the recorded toolstack keys, the
 * guest's frontend dir updated in place (backend, backend-id, permissions;
 * never deleted, FE/state never touched), then FE/shadow/generation bumped.
 *
 * A device that holds a connection to a hot standby (hotsb.c) in a slot,
 * when that standby is the new domain, is *switched* instead: its backend
 * dir is there already, naming the slot, so FE/backend and backend-id are
 * pointed at it, the generation bumped and FE/shadow/standby removed; the
 * frontend goes live on its idle connection without a handshake (if the
 * slot is Connected; otherwise it finishes the handshake there). Any other
 * device gets a backend dir with `frontend` = FE (schema.md, "The hot
 * standby's connection").
 *
 * All of it is one transaction, so the frontend and the new backend see the
 * device appear whole; a transaction that keeps conflicting (the guest is
 * writing its own dir) is retried a bounded number of times, then the same
 * writes are made one by one in a safe order: backend dir, frontend
 * permissions, frontend keys, generation last. A switch that shadowd knows
 * all it needs of (the slot held, Connected, FE's generation and recoveries
 * read while it was held: hotsb.c) is made in that order at once, without
 * a transaction or a read: the guest moves after the third round trip (the
 * generation), FE/shadow/standby's removal comes fourth. Rewiring is
 * idempotent: a device already pointing at the new domain, its generation
 * moved, is left alone. */
#define _GNU_SOURCE
#include "rewire.h"

#include "dom.h"
#include "fence.h"
#include "log.h"
#include "record.h"

#include "pv-keys.h"
#include "sd_text.h"
#include "understudy-keys.h"
#include "xs_txn.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FE_NODES 512
#define MAX_FE_DEPTH 4

/* Set perms on dir and every node below it; with root (a frontend dir) set,
 * not on its slots, which have their own reader (schema.md). 0, or -1. */
static int chmod_tree(struct xs_handle *xs, xs_transaction_t t, const char *dir,
                      struct xs_permissions *perms, unsigned np, int depth, unsigned *budget,
                      const char *root)
{
    if (!*budget) {
        errno = E2BIG;
        return -1;
    }
    (*budget)--;
    if (root && sd_front_which(root, dir) > 0)
        return 0;
    if (!xs_set_permissions(xs, t, dir, perms, np))
        return errno == ENOENT && depth > 0 ? 0 : -1;
    if (depth >= MAX_FE_DEPTH)
        return 0;
    unsigned n = 0;
    char **kids = xs_directory(xs, t, dir, &n);
    if (!kids)
        return errno == ENOENT ? 0 : -1;
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        char path[1024];
        if (!xsu_path(path, sizeof(path), dir, kids[i]))
            rc = -1;
        else
            rc = chmod_tree(xs, t, path, perms, np, depth + 1, budget, root);
    }
    free(kids);
    return rc;
}

int sd_rewire_chmod(struct xs_handle *xs, xs_transaction_t t, const char *dir, unsigned owner,
                    unsigned reader, bool is_fe)
{
    struct xs_permissions p[2] = {{.id = owner, .perms = XS_PERM_NONE},
                                  {.id = reader, .perms = XS_PERM_READ}};
    unsigned budget = MAX_FE_NODES;
    return chmod_tree(xs, t, dir, p, 2, 0, &budget, is_fe ? dir : NULL);
}

int sd_rewire_write_be(struct xs_handle *xs, const struct sd_dev *v, unsigned drv,
                       xs_transaction_t t, const char *be, const char *front)
{
    char num[32];
    /* Owned by the new driver domain, readable by the guest. */
    struct xs_permissions be_perms[2] = {{.id = drv, .perms = XS_PERM_NONE},
                                         {.id = v->fe, .perms = XS_PERM_READ}};
    if (!xs_mkdir(xs, t, be) || !xs_set_permissions(xs, t, be, be_perms, 2))
        return -1;
    for (unsigned i = 0; i < v->nkv; i++)
        if (xsu_printf(xs, t, be, v->kv[i].k, "%s", v->kv[i].v) < 0)
            return -1;
    snprintf(num, sizeof(num), "%u", v->fe);
    if (xsu_printf(xs, t, be, PVK_FRONTEND, "%s", front) < 0 ||
        xsu_printf(xs, t, be, PVK_FRONTEND_ID, "%s", num) < 0 ||
        xsu_printf(xs, t, be, PVK_ONLINE, "1") < 0 || xsu_printf(xs, t, be, PVK_STATE, "1") < 0)
        return -1;
    return 0;
}

/* What every rewire of v reads, inside t: the next generation, and
 * whether the frontend is shadow-aware, with its recoveries so far. One
 * that holds a standby connection is (hotsb.c attaches only those): its
 * state is not read again. */
static uint64_t read_frontend(struct xs_handle *xs, struct sd_dev *v, xs_transaction_t t,
                              bool aware, bool cached)
{
    uint64_t g = 0;
    if (cached) {
        /* Read while the slot was held, and not written since (hotsb.c):
         * two round trips fewer in a switch's transaction. */
        v->shadow_aware = true;
        v->rec_base = v->fe_rec;
        return (v->fe_gen > v->generation ? v->fe_gen : v->generation) + 1;
    }
    if (xsu_read_u64(xs, t, v->fe_path, USK_FE_GENERATION, SD_GEN_MAX, &g) < 0)
        g = 0; /* absent or nonsense: ours is the reference */
    uint64_t rec = 0;
    v->shadow_aware = aware;
    if (!aware) {
        char *st = xsu_read(xs, t, v->fe_path, USK_FE_STATE, 32);
        v->shadow_aware = st != NULL;
        free(st);
    }
    if (v->shadow_aware && xsu_read_u64(xs, t, v->fe_path, USK_FE_RECOVERIES, UINT64_MAX, &rec) < 0)
        rec = 0;
    v->rec_base = rec;
    return (g > v->generation ? g : v->generation) + 1;
}

/* The frontend dir, in place: the guest owns it, the new backend reads it
 * (not its slots: hotsb.c sets theirs); backend, backend-id, generation.
 * Without chmod the permissions are left to the caller: a hot switch sets
 * them after its own transaction (sd_rewire_switched_perms). */
static int point_frontend(struct xs_handle *xs, struct sd_dom *d, struct sd_dev *v, unsigned drv,
                          xs_transaction_t t, const char *be, uint64_t gen, const char **what,
                          bool chmod)
{
    char num[32];
    *what = "set the frontend dir's permissions";
    if (chmod && sd_rewire_chmod(xs, t, v->fe_path, v->fe, drv, true) < 0)
        return -1;
    snprintf(num, sizeof(num), "%u", drv);
    *what = "point the frontend at the new backend";
    if (xsu_printf(xs, t, v->fe_path, PVK_BACKEND, "%s", be) < 0 ||
        xsu_printf(xs, t, v->fe_path, PVK_BACKEND_ID, "%s", num) < 0)
        return -1;
    snprintf(num, sizeof(num), "%llu", (unsigned long long)gen);
    *what = "bump the frontend's generation";
    if (xsu_printf(xs, t, v->fe_path, USK_FE_GENERATION, "%s", num) < 0)
        return -1;
    /* Every earlier backend is destroyed already (a cold restart): nothing
     * of theirs can land, the frontend holds no write for them. Otherwise
     * the background destroy's end says it (fence.c). */
    *what = "say the earlier backends are fenced";
    return sd_fenced_all(d) ? xsu_printf(xs, t, v->fe_path, USK_FE_FENCED, "%s", num) : 0;
}

/* A Connected slot held for drv, as shadowd's own attach wrote it and the
 * guest's events since have kept it current (hotsb.c: FE/shadow/standby
 * re-read on each change, the slot's state until Connected and again after
 * any change under it). */
static bool known_switch(const struct sd_dev *v, unsigned drv)
{
    return v->hot_known && v->hot_slot > 0 && v->hot_domid == drv && v->hot_up && !v->hot_recheck;
}

/* The slot v holds for domain drv, its backend being be: SD_SLOT_A or
 * SD_SLOT_B, with *up if the frontend has it Connected; 0 if it holds none
 * for drv. FE/shadow/standby and the slot are the guest's; be, which only
 * dom0 and drv write, must name the slot back (hotsb.c wrote both at the
 * attach). The slot's own backend keys are not read again: a guest that
 * changed them since misleads only its own frontend, which is pointed at
 * be whatever they say (three round trips fewer a device in a promotion:
 * on Xen in QEMU a round trip is some 20 ms). */
static int held_slot(struct xs_handle *xs, xs_transaction_t t, const struct sd_dev *v, unsigned drv,
                     const char *be, bool *up)
{
    /* Known: switched without the three reads below, each a round trip
     * inside the switch's transaction, on the failover's critical path. */
    if (known_switch(v, drv)) {
        *up = true;
        return v->hot_slot;
    }
    char slot[160];
    char *name = xsu_read(xs, t, v->fe_path, USK_FE_STANDBY, 16);
    int s = sd_parse_slot(name);
    free(name);
    *up = false;
    if (s < 0 || !sd_slot_path(slot, sizeof(slot), v->fe_path, s))
        return 0;
    char *f = xsu_read(xs, t, be, PVK_FRONTEND, 256);
    bool held = f && !strcmp(f, slot);
    free(f);
    if (!held)
        return 0;
    uint64_t st = 0;
    *up = xsu_read_u64(xs, t, slot, PVK_STATE, 7, &st) == 0 && st == 4;
    return s;
}

/* The writes of one rewire, inside t (or XBT_NULL). 0, or -1 with errno and
 * the failing step in *what; *hot says the device was switched to the
 * connection it held Connected. */
static int write_all(struct xs_handle *xs, struct sd_dom *d, struct sd_dev *v, unsigned drv,
                     xs_transaction_t t, const char *be, uint64_t *gen_out, const char **what,
                     bool *hot, bool *switched)
{
    bool up;
    int s = held_slot(xs, t, v, drv, be, &up);
    uint64_t gen = read_frontend(xs, v, t, s > 0, s > 0 && known_switch(v, drv) && v->fe_known);
    *hot = *switched = false;
    if (s) {
        /* Switch: the backend dir is there, naming the slot. FE's
         * permissions wait until after: the standby's backend reads its
         * slot, and they are two round trips per node of FE (10-20 ms of
         * the switch on xensim). */
        char sb[160];
        *what = "point the frontend at its standby connection";
        *switched = true;
        if (point_frontend(xs, d, v, drv, t, be, gen, what, false) < 0 ||
            !xsu_path(sb, sizeof(sb), v->fe_path, USK_FE_STANDBY) ||
            (!xs_rm(xs, t, sb) && errno != ENOENT))
            return -1;
        *hot = up;
        *gen_out = gen;
        return 0;
    }
    *what = "write the backend dir";
    if (sd_rewire_write_be(xs, v, drv, t, be, v->fe_path) < 0 ||
        point_frontend(xs, d, v, drv, t, be, gen, what, true) < 0)
        return -1;
    *gen_out = gen;
    return 0;
}

struct rewire_txn {
    struct sd_dom *d;
    struct sd_dev *v;
    unsigned drv;
    const char *be;
    uint64_t gen;
    const char *what;
    bool hot, switched;
};

static int rewire_body(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    struct rewire_txn *r = arg;
    return write_all(xs, r->d, r->v, r->drv, t, r->be, &r->gen, &r->what, &r->hot, &r->switched);
}

static int chmod_body(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    const struct rewire_txn *r = arg;
    return sd_rewire_chmod(xs, t, r->v->fe_path, r->v->fe, r->drv, true);
}

/* The rewire's writes are in: what shadowd keeps of them (the caller marks
 * the devices dirty: this may run in one of xspool's threads). */
static void rewired(struct sd_dev *v, const struct rewire_txn *r)
{
    v->generation = r->gen;
    v->hot_switched = r->hot;
    v->chmod_pending = r->switched;
}

/* Already rewired to drv (a resumed recovery)? Its backend dir names FE or
 * one of FE's slots, and the generation moved past the one shadowd saved
 * before the rewire (a switch writes it after backend and backend-id,
 * outside a transaction: sd_rewire_dev). */
static bool already_done(struct xs_handle *xs, const struct sd_dev *v, unsigned drv, const char *be)
{
    char *b = xsu_read(xs, XBT_NULL, v->fe_path, PVK_BACKEND, 256);
    char *f = xsu_read(xs, XBT_NULL, be, PVK_FRONTEND, 256);
    uint64_t id = 0, g = 0;
    bool done = b && f && !strcmp(b, be) && sd_front_which(v->fe_path, f) >= 0 &&
                xsu_read_u64(xs, XBT_NULL, v->fe_path, PVK_BACKEND_ID, 0x7FEF, &id) == 0 &&
                id == drv &&
                xsu_read_u64(xs, XBT_NULL, v->fe_path, USK_FE_GENERATION, SD_GEN_MAX, &g) == 0 &&
                g > v->generation;
    free(b);
    free(f);
    return done;
}

int sd_rewire_dev(struct xs_handle *xs, struct sd_dom *d, struct sd_dev *v, unsigned drv,
                  bool maybe_done)
{
    char be[160];
    sd_be_path(be, sizeof(be), drv, v);
    if (maybe_done && already_done(xs, v, drv, be)) {
        v->base_unknown = true;
        char *st = xsu_read(xs, XBT_NULL, v->fe_path, USK_FE_STATE, 32);
        v->shadow_aware = st != NULL;
        free(st);
        return 1;
    }
    /* The backend dir's parent (BE's type/guest level) made first, outside
     * the transaction: made inside, it adds a child to the type's dir that
     * every other guest's rewire adds one to as well, and rewires that run
     * at once (xspool.c) would conflict on it and be retried. A node made
     * this way gets the permissions it would get inside. Not for a switch:
     * the standby's attach made it. */
    if (!(v->hot_known && v->hot_slot && v->hot_domid == drv)) {
        char parent[160];
        snprintf(parent, sizeof(parent), "%s", be);
        char *slash = strrchr(parent, '/');
        if (slash)
            *slash = 0;
        if (slash && !xs_mkdir(xs, XBT_NULL, parent))
            sd_dlog(d, "rewire %s %u of guest %u: make %s: %s (made in the transaction then)",
                    v->type, v->devid, v->fe, parent, strerror(errno));
    }
    struct rewire_txn r = {.d = d, .v = v, .drv = drv, .be = be, .what = "start a transaction"};
    if (known_switch(v, drv) && v->fe_known) {
        /* A switch shadowd knows all it needs of: three writes, in the
         * order the frontend reads them (backend, backend-id, then the
         * generation it watches), and FE/shadow/standby's removal - no
         * transaction, whose start and end would be two more round trips
         * before the guest can move (on Xen in QEMU some 20 ms each). The
         * guest sees nothing half done: it acts on the generation alone. */
        if (write_all(xs, d, v, drv, XBT_NULL, be, &r.gen, &r.what, &r.hot, &r.switched) < 0) {
            int e = errno;
            sd_dlog(d, "rewire %s %u of guest %u: %s: %s", v->type, v->devid, v->fe, r.what,
                    strerror(e));
            errno = e;
            return -1;
        }
        rewired(v, &r);
        return 0;
    }
    const char *call;
    if (xsu_txn(xs, rewire_body, &r, &call) == 0) {
        rewired(v, &r);
        return 0;
    }
    if (!call) {
        int e = errno;
        sd_dlog(d, "rewire %s %u of guest %u: %s: %s", v->type, v->devid, v->fe, r.what,
                strerror(e));
        errno = e;
        return -1;
    }
    if (strcmp(call, "xs_transaction_end") || errno != EAGAIN) {
        int e = errno;
        sd_dlog(d, "rewire %s %u of guest %u: %s: %s", v->type, v->devid, v->fe, call, strerror(e));
        errno = e;
        return -1;
    }
    sd_dlog(d, "rewire %s %u of guest %u: the transaction keeps conflicting; writing in order",
            v->type, v->devid, v->fe);
    if (write_all(xs, d, v, drv, XBT_NULL, be, &r.gen, &r.what, &r.hot, &r.switched) < 0) {
        sd_dlog(d, "rewire %s %u of guest %u: %s: %s", v->type, v->devid, v->fe, r.what,
                strerror(errno));
        return -1;
    }
    rewired(v, &r);
    return 0;
}

/* After a switch: FE readable by the standby's domain (and no longer by the
 * failed one, fenced already). A failure leaves FE as it was - logged; the
 * next rewire sets it again. */
void sd_rewire_switched_perms(struct xs_handle *xs, struct sd_dom *d, struct sd_dev *v,
                              unsigned drv)
{
    if (!v->chmod_pending)
        return;
    v->chmod_pending = false;
    struct rewire_txn r = {.d = d, .v = v, .drv = drv};
    const char *call;
    if (xsu_txn(xs, chmod_body, &r, &call) < 0)
        sd_dlog(d, "rewire %s %u of guest %u: set the frontend dir's permissions: %s: %s", v->type,
                v->devid, v->fe, call ? call : "a read or write", strerror(errno));
}

/* Switched devices' permissions set a loop turn: one turn is a round trip
 * or two per node of each FE on each of xspool's connections, and the loop
 * does nothing else meanwhile (on Xen in QEMU some 20 ms a round trip). */
#define PERMS_CHUNK (SD_XSPOOL_MAX + 1)

struct perms_job {
    struct sd_dom *d;
    struct sd_dev *v[PERMS_CHUNK];
};

static void perms_one(struct xs_handle *xs, unsigned i, void *arg)
{
    struct perms_job *j = arg;
    sd_rewire_switched_perms(xs, j->d, j->v[i], j->d->srv.domid);
}

static bool perms_wanted(const struct sd_dev *v)
{
    return v->chmod_pending && v->paired;
}

bool sd_rewire_perms_due(const struct sd_dom *d)
{
    if (d->state != DS_UP || !d->srv.domid)
        return false;
    if (d->perms_unknown)
        return true;
    for (unsigned i = 0; i < d->ndevs; i++)
        if (perms_wanted(d->devs[i]))
            return true;
    return false;
}

/* After a start: a paired device whose FE is not n<guest>,r<serving> was
 * switched by a shadowd that died before it set them. One read a device. */
static void perms_look(struct sd_dom *d)
{
    d->perms_unknown = false;
    for (unsigned i = 0; i < d->ndevs; i++) {
        struct sd_dev *v = d->devs[i];
        if (!v->paired)
            continue;
        unsigned n = 0;
        struct xs_permissions *p = xs_get_permissions(d->sd->xs, XBT_NULL, v->fe_path, &n);
        v->chmod_pending = p && (n != 2 || p[0].id != v->fe || p[0].perms != XS_PERM_NONE ||
                                 p[1].id != d->srv.domid || p[1].perms != XS_PERM_READ);
        free(p);
    }
}

void sd_rewire_perms_tick(struct sd_dom *d)
{
    if (!sd_rewire_perms_due(d))
        return;
    if (d->perms_unknown)
        perms_look(d);
    struct perms_job j = {.d = d};
    unsigned n = 0;
    for (unsigned i = 0; i < d->ndevs && n < PERMS_CHUNK; i++)
        if (perms_wanted(d->devs[i]))
            j.v[n++] = d->devs[i];
    if (n)
        sd_xspool_run(d->sd, n, perms_one, &j);
}

/* The dir the frontend's connection to be is in: the one be's `frontend`
 * names, FE or one of its slots (the new domain writes be: anything else is
 * taken as FE). */
static const char *live_dir(struct xs_handle *xs, const struct sd_dev *v, const char *be, char *buf,
                            size_t len)
{
    char *f = xsu_read(xs, XBT_NULL, be, PVK_FRONTEND, 256);
    int s = f ? sd_front_which(v->fe_path, f) : -1;
    free(f);
    return s > 0 && sd_slot_path(buf, len, v->fe_path, s) ? buf : v->fe_path;
}

/* The frontend's word first: while it is not live (each of its writes is
 * an event that brings shadowd here), one read says no, where the two
 * dirs' states would be three that say yes (a hot switch keeps both
 * Connected throughout). */
bool sd_rewire_reconnected(struct sd_dom *d, struct sd_dev *v, unsigned drv)
{
    struct xs_handle *xs = d->sd->xs;
    char be[160], slot[192];
    if (v->shadow_aware) {
        char *st = xsu_read(xs, XBT_NULL, v->fe_path, USK_FE_STATE, 32);
        bool live = st && !strcmp(st, USK_STATE_LIVE);
        if (st && !strcmp(st, USK_STATE_FAILED) && !v->gave_up) {
            v->gave_up = true;
            sd_dlog(d,
                    "recovery %u: the frontend of %s %u of guest %u says it failed; not "
                    "waiting for it",
                    d->rec.id, v->type, v->devid, v->fe);
        }
        free(st);
        uint64_t rec = 0;
        if (!live ||
            xsu_read_u64(xs, XBT_NULL, v->fe_path, USK_FE_RECOVERIES, UINT64_MAX, &rec) < 0 ||
            (!v->base_unknown && rec <= v->rec_base))
            return false;
    }
    sd_be_path(be, sizeof(be), drv, v);
    if (xsu_read_state(xs, be) != 4 ||
        xsu_read_state(xs, live_dir(xs, v, be, slot, sizeof(slot))) != 4)
        return false;
    if (!v->shadow_aware)
        return true; /* an ordinary frontend: connected is all it can say */
    char *last = xsu_read(xs, XBT_NULL, v->fe_path, USK_FE_LAST_RECOVERY, 127);
    snprintf(v->fe_last, sizeof(v->fe_last), "%s", last ? last : "");
    free(last);
    return true;
}
