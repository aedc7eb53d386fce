/* rewire.c - pointing one recorded device at a new driver domain (DESIGN.md
 * steps 4 and 6): the new backend dir from the recorded toolstack keys, the
 * guest's frontend dir updated in place (backend, backend-id, permissions;
 * never deleted, FE/state never touched), then FE/shadow/generation bumped.
 *
 * All of it is one transaction, so the frontend and the new backend see the
 * device appear whole; a transaction that keeps conflicting (the guest is
 * writing its own dir) is retried a bounded number of times, then the same
 * writes are made one by one in a safe order: backend dir, frontend
 * permissions, frontend keys, generation last. Rewiring is idempotent: a
 * device already pointing at the new domain is left alone. */
#define _GNU_SOURCE
#include "rewire.h"

#include "dom.h"
#include "log.h"
#include "record.h"

#include "pv-keys.h"
#include "understudy-keys.h"
#include "xs_txn.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FE_NODES 512
#define MAX_FE_DEPTH 4
#define GEN_MAX      (1ull << 53) /* a guest's absurd generation is not ours to follow */

/* Set perms on dir and every node below it. 0, or -1 with errno. */
static int chmod_tree(struct xs_handle *xs, xs_transaction_t t, const char *dir,
                      struct xs_permissions *perms, unsigned np, int depth, unsigned *budget)
{
    if (!*budget) {
        errno = E2BIG;
        return -1;
    }
    (*budget)--;
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
            rc = chmod_tree(xs, t, path, perms, np, depth + 1, budget);
    }
    free(kids);
    return rc;
}

static int put(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
               const char *val)
{
    char path[1024];
    if (!xsu_path(path, sizeof(path), dir, key))
        return -1;
    return xs_write(xs, t, path, val, (unsigned)strlen(val)) ? 0 : -1;
}

/* The writes of one rewire, inside t (or XBT_NULL). 0, or -1 with errno and
 * the failing step in *what. */
static int write_all(struct sd_dom *d, struct sd_dev *v, unsigned drv, xs_transaction_t t,
                     const char *be, uint64_t *gen_out, const char **what)
{
    struct xs_handle *xs = d->sd->xs;
    char num[32];
    uint64_t g = 0;
    if (xsu_read_u64(xs, t, v->fe_path, USK_FE_GENERATION, GEN_MAX, &g) < 0)
        g = 0; /* absent or nonsense: ours is the reference */
    uint64_t gen = (g > v->generation ? g : v->generation) + 1;
    uint64_t rec = 0;
    v->shadow_aware = false;
    char *st = xsu_read(xs, t, v->fe_path, USK_FE_STATE, 32);
    if (st) {
        v->shadow_aware = true;
        free(st);
        if (xsu_read_u64(xs, t, v->fe_path, USK_FE_RECOVERIES, UINT64_MAX, &rec) < 0)
            rec = 0;
    }
    v->rec_base = rec;
    /* The backend dir: owned by the new driver domain, readable by the guest. */
    struct xs_permissions be_perms[2] = {{.id = drv, .perms = XS_PERM_NONE},
                                         {.id = v->fe, .perms = XS_PERM_READ}};
    *what = "create the backend dir";
    if (!xs_mkdir(xs, t, be) || !xs_set_permissions(xs, t, be, be_perms, 2))
        return -1;
    *what = "write the backend's toolstack keys";
    for (unsigned i = 0; i < v->nkv; i++)
        if (put(xs, t, be, v->kv[i].k, v->kv[i].v) < 0)
            return -1;
    snprintf(num, sizeof(num), "%u", v->fe);
    if (put(xs, t, be, PVK_FRONTEND, v->fe_path) < 0 || put(xs, t, be, PVK_FRONTEND_ID, num) < 0 ||
        put(xs, t, be, PVK_ONLINE, "1") < 0 || put(xs, t, be, PVK_STATE, "1") < 0)
        return -1;
    /* The frontend dir, in place: the guest owns it, the new backend reads it. */
    struct xs_permissions fe_perms[2] = {{.id = v->fe, .perms = XS_PERM_NONE},
                                         {.id = drv, .perms = XS_PERM_READ}};
    unsigned budget = MAX_FE_NODES;
    *what = "set the frontend dir's permissions";
    if (chmod_tree(xs, t, v->fe_path, fe_perms, 2, 0, &budget) < 0)
        return -1;
    snprintf(num, sizeof(num), "%u", drv);
    *what = "point the frontend at the new backend";
    if (put(xs, t, v->fe_path, PVK_BACKEND, be) < 0 ||
        put(xs, t, v->fe_path, PVK_BACKEND_ID, num) < 0)
        return -1;
    snprintf(num, sizeof(num), "%llu", (unsigned long long)gen);
    *what = "bump the frontend's generation";
    if (put(xs, t, v->fe_path, USK_FE_GENERATION, num) < 0)
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
};

static int rewire_body(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    (void)xs;
    struct rewire_txn *r = arg;
    return write_all(r->d, r->v, r->drv, t, r->be, &r->gen, &r->what);
}

/* Already rewired to drv (a resumed recovery)? */
static bool already_done(struct sd_dom *d, const struct sd_dev *v, unsigned drv, const char *be)
{
    struct xs_handle *xs = d->sd->xs;
    char *b = xsu_read(xs, XBT_NULL, v->fe_path, PVK_BACKEND, 256);
    char *f = xsu_read(xs, XBT_NULL, be, PVK_FRONTEND, 256);
    uint64_t id = 0;
    bool done = b && f && !strcmp(b, be) && !strcmp(f, v->fe_path) &&
                xsu_read_u64(xs, XBT_NULL, v->fe_path, PVK_BACKEND_ID, 0x7FEF, &id) == 0 &&
                id == drv;
    free(b);
    free(f);
    return done;
}

int sd_rewire_dev(struct sd_dom *d, struct sd_dev *v, unsigned drv)
{
    struct xs_handle *xs = d->sd->xs;
    char be[160];
    sd_be_path(be, sizeof(be), drv, v);
    if (already_done(d, v, drv, be)) {
        v->base_unknown = true;
        char *st = xsu_read(xs, XBT_NULL, v->fe_path, USK_FE_STATE, 32);
        v->shadow_aware = st != NULL;
        free(st);
        return 1;
    }
    struct rewire_txn r = {.d = d, .v = v, .drv = drv, .be = be, .what = "start a transaction"};
    const char *call;
    if (xsu_txn(xs, rewire_body, &r, &call) == 0) {
        v->generation = r.gen;
        d->devs_dirty = true;
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
    if (write_all(d, v, drv, XBT_NULL, be, &r.gen, &r.what) < 0) {
        sd_dlog(d, "rewire %s %u of guest %u: %s: %s", v->type, v->devid, v->fe, r.what,
                strerror(errno));
        return -1;
    }
    v->generation = r.gen;
    d->devs_dirty = true;
    return 0;
}

bool sd_rewire_reconnected(struct sd_dom *d, struct sd_dev *v, unsigned drv)
{
    struct xs_handle *xs = d->sd->xs;
    char be[160];
    sd_be_path(be, sizeof(be), drv, v);
    if (xsu_read_state(xs, be) != 4 || xsu_read_state(xs, v->fe_path) != 4) {
        char *st = xsu_read(xs, XBT_NULL, v->fe_path, USK_FE_STATE, 32);
        if (st && !strcmp(st, USK_STATE_FAILED) && !v->gave_up) {
            v->gave_up = true;
            sd_dlog(d,
                    "recovery %u: the frontend of %s %u of guest %u says it failed; not "
                    "waiting for it",
                    d->rec.id, v->type, v->devid, v->fe);
        }
        free(st);
        return false;
    }
    if (!v->shadow_aware)
        return true; /* an ordinary frontend: connected is all it can say */
    char *st = xsu_read(xs, XBT_NULL, v->fe_path, USK_FE_STATE, 32);
    bool live = st && !strcmp(st, USK_STATE_LIVE);
    free(st);
    uint64_t rec = 0;
    if (!live || xsu_read_u64(xs, XBT_NULL, v->fe_path, USK_FE_RECOVERIES, UINT64_MAX, &rec) < 0 ||
        (!v->base_unknown && rec <= v->rec_base))
        return false;
    char *last = xsu_read(xs, XBT_NULL, v->fe_path, USK_FE_LAST_RECOVERY, 127);
    snprintf(v->fe_last, sizeof(v->fe_last), "%s", last ? last : "");
    free(last);
    return true;
}
