/* hotsb.c - the hot standby's connections (schema.md, "The hot standby's
 * connection"): with `standby on`, every recorded device whose frontend is
 * shadow-aware gets a second frontend dir, a *slot* (FE/shadow/slot-a or
 * slot-b, the one its live connection is not in), and a backend dir in the
 * standby domain naming the slot; FE/shadow/standby tells the frontend to
 * connect there and hold the connection idle. At a failure the promotion
 * then switches the frontend to it (rewire.c) with no backend to start and
 * no handshake to wait for.
 *
 * Attached while the domain is up, no recovery in progress, and the standby
 * ready (its heartbeat seen); one transaction per device. A slot the
 * frontend has not Connected within HOT_CONNECT_MS is detached again (its
 * frontend does not take slots): that device is rewired the warm way at a
 * promotion, and not attached to this standby again. A standby that dies or
 * is replaced takes its attachments with it: FE/shadow/standby and the slots
 * are removed (its backend dirs go with the domain). A slot that is neither
 * live nor held is removed once its backend dir no longer names it (the
 * failed domain's, after its destroy; fence.c).
 *
 * What shadowd believes of each device's connection is only a cache of the
 * store: after a recovery, a shadowd restart or a change of standby it is
 * read again from the store (reconcile), which is where the promotion looks
 * too. The slot and FE/shadow/standby are in the guest's dir: read with
 * bounds, and believed only as far as the backend dir (dom0's and the
 * standby's) agrees. Work per loop turn is bounded (SD_REWIRE_CHUNK). */
#define _GNU_SOURCE
#include "hotsb.h"

#include "dom.h"
#include "log.h"
#include "record.h"
#include "rewire.h"

#include "pv-keys.h"
#include "sd_text.h"
#include "understudy-keys.h"
#include "xs_txn.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOT_CONNECT_MS 10000 /* the frontend's handshake time (schema.md) */
#define HOT_RETRY_MS   1000  /* a busy slot, a failed transaction: try again */
#define HOT_MAX_COPY   64    /* toolstack keys copied from FE into a slot */
#define HOT_MAX_VISIT  256   /* nodes of FE looked at to find them */
#define HOT_COPY_DEPTH 3     /* levels below FE */

/* The standby attachments may be to: one that exists (booting, held or ready). */
static unsigned sb_domid(const struct sd_dom *d)
{
    const struct sd_standby *s = &d->sb;
    return (s->state == SB_READY || s->state == SB_BOOTING || s->state == SB_HELD) && !s->op_pending
               ? s->inst.domid
               : 0;
}

static bool sb_ready(const struct sd_dom *d)
{
    return d->sb.state == SB_READY && sb_domid(d);
}

void sd_hot_reset(struct sd_dom *d)
{
    for (unsigned i = 0; i < d->ndevs; i++) {
        struct sd_dev *v = d->devs[i];
        v->hot_known = false;
        v->hot_slot = 0;
        v->hot_up = v->hot_recheck = v->fe_known = false;
        v->hot_retry_ms = 0;
        v->stale_due = true;
    }
    d->hot_due = true;
}

unsigned sd_hot_count(const struct sd_dom *d, unsigned sb, unsigned *connected)
{
    unsigned n = 0, up = 0;
    for (unsigned i = 0; i < d->ndevs; i++) {
        const struct sd_dev *v = d->devs[i];
        if (v->paired && v->hot_known && v->hot_slot && v->hot_domid == sb && sb) {
            n++;
            up += v->hot_up;
        }
    }
    if (connected)
        *connected = up;
    return n;
}

/* The serving backend's `frontend`, as one of v's dirs (0: FE, SD_SLOT_A/B);
 * -1 if it names none (not paired: nothing to attach). */
static int live_of(struct sd_dom *d, const struct sd_dev *v, xs_transaction_t t)
{
    char be[160];
    sd_be_path(be, sizeof(be), d->srv.domid, v);
    char *f = xsu_read(d->sd->xs, t, be, PVK_FRONTEND, 256);
    int s = f ? sd_front_which(v->fe_path, f) : -1;
    free(f);
    return s;
}

/* Does the backend dir that slot (a dir of v) names as its backend still
 * name the slot back? The slot's value is the guest's: only a backend dir of
 * v's own type, guest and devid is looked at. */
static bool slot_named_back(struct xs_handle *xs, xs_transaction_t t, const struct sd_dev *v,
                            const char *slot)
{
    char *b = xsu_read(xs, t, slot, PVK_BACKEND, 256);
    uint64_t id = 0;
    char want[160];
    bool ok = b && xsu_read_u64(xs, t, slot, PVK_BACKEND_ID, 0x7FEF, &id) == 0;
    if (ok) {
        sd_be_path(want, sizeof(want), (unsigned)id, v);
        ok = !strcmp(b, want);
    }
    free(b);
    if (!ok)
        return false;
    char *f = xsu_read(xs, t, want, PVK_FRONTEND, 256);
    ok = f && !strcmp(f, slot);
    free(f);
    return ok;
}

static int rm_path(struct xs_handle *xs, xs_transaction_t t, const char *path)
{
    return xs_rm(xs, t, path) || errno == ENOENT ? 0 : -1;
}

/* ---- detach ---- */

struct detach_txn {
    struct sd_dom *d;
    struct sd_dev *v;
    int slot;
    unsigned sb; /* the standby whose backend dir goes with it, if it names the slot */
};

static int detach_body(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    struct detach_txn *a = arg;
    char path[192], be[160];
    if (!xsu_path(path, sizeof(path), a->v->fe_path, USK_FE_STANDBY) || rm_path(xs, t, path) < 0)
        return -1;
    if (a->slot <= 0 || !sd_slot_path(path, sizeof(path), a->v->fe_path, a->slot))
        return 0;
    if (live_of(a->d, a->v, t) == a->slot)
        return 0; /* never the live connection's dir */
    if (a->sb) {
        sd_be_path(be, sizeof(be), a->sb, a->v);
        char *f = xsu_read(xs, t, be, PVK_FRONTEND, 256);
        bool ours = f && !strcmp(f, path);
        free(f);
        if (ours && rm_path(xs, t, be) < 0)
            return -1;
    }
    return rm_path(xs, t, path);
}

static void detach(struct sd_dom *d, struct sd_dev *v, int slot, unsigned sb, const char *why)
{
    struct detach_txn a = {.d = d, .v = v, .slot = slot, .sb = sb};
    const char *call;
    if (xsu_txn(d->sd->xs, detach_body, &a, &call) < 0) {
        sd_dlog(d, "hot standby: detaching %s %u of guest %u: %s: %s; again later", v->type,
                v->devid, v->fe, call ? call : "xenstore", strerror(errno));
        v->hot_known = false; /* look again */
        v->hot_retry_ms = sd_now() + HOT_RETRY_MS;
        return;
    }
    sd_dlog(d, "hot standby: detached %s %u of guest %u%s%s: %s", v->type, v->devid, v->fe,
            slot > 0 ? " from " : "", slot > 0 ? sd_slot_name(slot) : "", why);
    v->hot_slot = 0;
    v->hot_up = v->hot_recheck = v->fe_known = false;
    v->hot_known = true;
}

/* ---- attach ---- */

enum attach_result { AT_DONE = 0, AT_NOT_AWARE, AT_BUSY, AT_UNPAIRED, AT_TOO_BIG };

struct attach_txn {
    struct sd_dom *d;
    struct sd_dev *v;
    unsigned sb;
    enum attach_result res;
    int slot;
    unsigned copied, visited;
};

/* Copy FE's toolstack keys below from (rel: their path below FE) into the
 * slot: every node but backend, backend-id, shadow/ and the keys a frontend
 * writes for its connection (schema.md). 0, or -1 (errno, or a->res). */
static int copy_keys(struct attach_txn *a, xs_transaction_t t, const char *from, const char *rel,
                     const char *slot, int depth)
{
    struct xs_handle *xs = a->d->sd->xs;
    unsigned n = 0;
    char **kids = xs_directory(xs, t, from, &n);
    if (!kids)
        return errno == ENOENT ? 0 : -1;
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        if (++a->visited > HOT_MAX_VISIT) {
            a->res = AT_TOO_BIG;
            rc = -1;
            break;
        }
        const char *k = kids[i];
        if (sd_fe_protocol_key(k) ||
            (depth == 0 && (!strcmp(k, PVK_BACKEND) || !strcmp(k, PVK_BACKEND_ID) ||
                            !strcmp(k, USK_FE_SLOT_DIR))))
            continue;
        char src[1024], name[512], dst[1024];
        if (snprintf(name, sizeof(name), "%s%s%s", rel, *rel ? "/" : "", k) >= (int)sizeof(name) ||
            !xsu_path(src, sizeof(src), from, k) || !xsu_path(dst, sizeof(dst), slot, name)) {
            a->res = AT_TOO_BIG;
            rc = -1;
            break;
        }
        char *val = xsu_read(xs, t, src, NULL, SD_MAX_VALUE);
        if (!val) {
            if (errno == ENOENT)
                continue; /* removed meanwhile */
            if (errno == EFBIG)
                a->res = AT_TOO_BIG;
            rc = -1;
            break;
        }
        if (++a->copied > HOT_MAX_COPY) {
            a->res = AT_TOO_BIG;
            rc = -1;
        } else if (!xs_write(xs, t, dst, val, (unsigned)strlen(val))) {
            rc = -1;
        } else if (depth + 1 < HOT_COPY_DEPTH) {
            rc = copy_keys(a, t, src, name, slot, depth + 1);
        }
        free(val);
    }
    free(kids);
    return rc;
}

static int attach_body(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    struct attach_txn *a = arg;
    struct sd_dev *v = a->v;
    char slot[192], be[160], num[16];
    a->res = AT_DONE;
    a->copied = a->visited = 0;
    char *st = xsu_read(xs, t, v->fe_path, USK_FE_STATE, 32);
    if (!st) {
        a->res = AT_NOT_AWARE; /* a stock frontend: it would never take the slot */
        return -1;
    }
    free(st);
    int live = live_of(a->d, v, t);
    if (live < 0) {
        a->res = AT_UNPAIRED;
        return -1;
    }
    a->slot = live == SD_SLOT_A ? SD_SLOT_B : SD_SLOT_A;
    if (!sd_slot_path(slot, sizeof(slot), v->fe_path, a->slot))
        return -1;
    /* What is in that slot now: a backend still naming it (a failed
     * domain's not destroyed yet) waits; anything else is stale. */
    if (slot_named_back(xs, t, v, slot)) {
        a->res = AT_BUSY;
        return -1;
    }
    sd_be_path(be, sizeof(be), a->sb, v);
    if (rm_path(xs, t, slot) < 0 || rm_path(xs, t, be) < 0)
        return -1;
    struct xs_permissions p[2] = {{.id = v->fe, .perms = XS_PERM_NONE},
                                  {.id = a->sb, .perms = XS_PERM_READ}};
    snprintf(num, sizeof(num), "%u", a->sb);
    if (!xs_mkdir(xs, t, slot) || !xs_set_permissions(xs, t, slot, p, 2) ||
        xsu_printf(xs, t, slot, PVK_BACKEND, "%s", be) < 0 ||
        xsu_printf(xs, t, slot, PVK_BACKEND_ID, "%s", num) < 0 ||
        xsu_printf(xs, t, slot, PVK_STATE, "1") < 0 || copy_keys(a, t, v->fe_path, "", slot, 0) < 0)
        return -1;
    /* New nodes inherit the slot's permissions; set them all the same, as a
     * rewire does for FE. */
    if (sd_rewire_chmod(xs, t, slot, v->fe, a->sb, false) < 0 ||
        sd_rewire_write_be(xs, v, a->sb, t, be, slot) < 0)
        return -1;
    return xsu_printf(xs, t, v->fe_path, USK_FE_STANDBY, "%s", sd_slot_name(a->slot));
}

static void attach(struct sd_dom *d, struct sd_dev *v, unsigned sb, uint64_t now)
{
    struct attach_txn a = {.d = d, .v = v, .sb = sb};
    const char *call;
    if (xsu_txn(d->sd->xs, attach_body, &a, &call) == 0) {
        v->hot_slot = a.slot;
        v->hot_domid = sb;
        v->hot_since = now;
        v->hot_up = v->hot_recheck = v->fe_known = false;
        v->hot_known = true;
        sd_dlog(d, "hot standby: attached %s %u of guest %u to standby domain %u in %s (%u keys)",
                v->type, v->devid, v->fe, sb, sd_slot_name(a.slot), a.copied);
        return;
    }
    switch (a.res) {
    case AT_NOT_AWARE:
        v->hot_retry_ms = UINT64_MAX; /* until its frontend writes shadow/state */
        break;
    case AT_BUSY:
        v->hot_retry_ms = now + HOT_RETRY_MS; /* until the failed domain's backend dir goes */
        v->stale_due = true;
        break;
    case AT_TOO_BIG:
        sd_dlog(d,
                "hot standby: %s %u of guest %u: its frontend dir has more than %u keys, or "
                "one too long, to copy into a slot; not attached",
                v->type, v->devid, v->fe, HOT_MAX_COPY);
        v->hot_refused = sb;
        break;
    case AT_UNPAIRED:
        v->hot_retry_ms = now + HOT_RETRY_MS;
        break;
    default:
        sd_dlog(d, "hot standby: attaching %s %u of guest %u: %s: %s; again in %u ms", v->type,
                v->devid, v->fe, call ? call : "xenstore", strerror(errno), HOT_RETRY_MS);
        v->hot_retry_ms = now + HOT_RETRY_MS;
        break;
    }
}

/* ---- what the store says ---- */

/* Read v's connection from the store: adopt one to the standby that checks
 * out, detach anything else (a standby gone or replaced, a guest's own
 * value). */
static void reconcile(struct sd_dom *d, struct sd_dev *v, unsigned sb, uint64_t now)
{
    struct xs_handle *xs = d->sd->xs;
    v->hot_slot = 0;
    v->hot_up = v->hot_recheck = v->fe_known = false;
    v->stale_due = true;
    char *name = xsu_read(xs, XBT_NULL, v->fe_path, USK_FE_STANDBY, 16);
    if (!name) {
        v->hot_known = errno == ENOENT; /* else: look again */
        return;
    }
    int s = sd_parse_slot(name);
    free(name);
    char slot[192], be[160];
    uint64_t st = 0;
    if (s > 0 && sb && sd_slot_path(slot, sizeof(slot), v->fe_path, s) &&
        slot_named_back(xs, XBT_NULL, v, slot)) {
        uint64_t id = 0;
        sd_be_path(be, sizeof(be), sb, v);
        char *b = xsu_read(xs, XBT_NULL, slot, PVK_BACKEND, 256);
        bool ours = b && !strcmp(b, be) &&
                    xsu_read_u64(xs, XBT_NULL, slot, PVK_BACKEND_ID, 0x7FEF, &id) == 0 && id == sb;
        free(b);
        if (ours && live_of(d, v, XBT_NULL) != s) {
            v->hot_known = true;
            v->hot_slot = s;
            v->hot_domid = sb;
            v->hot_since = now;
            v->hot_recheck = v->fe_known = false;
            v->hot_up = xsu_read_u64(xs, XBT_NULL, slot, PVK_STATE, 7, &st) == 0 && st == 4;
            sd_dlog(d, "hot standby: %s %u of guest %u holds %s on standby domain %u (%s): adopted",
                    v->type, v->devid, v->fe, sd_slot_name(s), sb,
                    v->hot_up ? "Connected" : "not Connected yet");
            return;
        }
    }
    /* The same standby as at our attach: the guest changed what it held.
     * Not attached again at once (it would only change it again). */
    bool same = sb && v->hot_domid == sb;
    detach(d, v, s, sb,
           same    ? "its frontend dir no longer agrees with the attach"
           : s > 0 ? "its standby domain is gone or replaced"
                   : "not a slot's name");
    if (same)
        v->hot_retry_ms = now + HOT_CONNECT_MS;
}

/* Remove v's slots that are neither live nor held, once no backend dir
 * names them; stale_due stays set while one waits for that. */
static void stale_slots(struct sd_dom *d, struct sd_dev *v)
{
    struct xs_handle *xs = d->sd->xs;
    int live = live_of(d, v, XBT_NULL);
    v->stale_due = false;
    if (live < 0)
        return; /* not paired as we see it: not ours to tidy (its next change says) */
    v->live_slot = live;
    for (int s = SD_SLOT_A; s <= SD_SLOT_B; s++) {
        char slot[192];
        if (s == live || s == v->hot_slot || !sd_slot_path(slot, sizeof(slot), v->fe_path, s))
            continue;
        char *self = xsu_read(xs, XBT_NULL, slot, NULL, 64);
        if (!self)
            continue; /* no such slot (or one we cannot read: left alone) */
        free(self);
        if (slot_named_back(xs, XBT_NULL, v, slot)) {
            v->stale_due = true; /* the failed domain is not destroyed yet */
            continue;
        }
        if (!xs_rm(xs, XBT_NULL, slot) && errno != ENOENT)
            sd_dlog(d, "hot standby: removing stale %s: %s", slot, strerror(errno));
        else
            sd_dlog(d, "hot standby: removed %s of %s %u of guest %u (no longer live nor held)",
                    sd_slot_name(s), v->type, v->devid, v->fe);
    }
}

/* What a switch would read of FE in its transaction, read ahead while
 * the slot is held (rewire.c); absent or nonsense reads as 0, as there. */
static void read_fe_keys(struct sd_dom *d, struct sd_dev *v)
{
    struct xs_handle *xs = d->sd->xs;
    v->fe_known = true; /* before the reads: an event during them clears it */
    if (xsu_read_u64(xs, XBT_NULL, v->fe_path, USK_FE_GENERATION, SD_GEN_MAX, &v->fe_gen) < 0)
        v->fe_gen = 0;
    if (xsu_read_u64(xs, XBT_NULL, v->fe_path, USK_FE_RECOVERIES, UINT64_MAX, &v->fe_rec) < 0)
        v->fe_rec = 0;
}

/* The held slot Connected? */
static void check_up(struct sd_dom *d, struct sd_dev *v, uint64_t now)
{
    if (v->hot_up && !v->fe_known)
        read_fe_keys(d, v);
    char slot[192];
    uint64_t st = 0;
    if ((v->hot_up && !v->hot_recheck) || !v->hot_slot ||
        !sd_slot_path(slot, sizeof(slot), v->fe_path, v->hot_slot))
        return;
    if (xsu_read_u64(d->sd->xs, XBT_NULL, slot, PVK_STATE, 7, &st) == 0 && st == 4) {
        v->hot_recheck = false;
        if (v->hot_up)
            return; /* still */
        v->hot_up = true;
        read_fe_keys(d, v);
        sd_dlog(d,
                "hot standby: %s %u of guest %u connected to standby domain %u in %s, %llu ms "
                "after the attach",
                v->type, v->devid, v->fe, v->hot_domid, sd_slot_name(v->hot_slot),
                (unsigned long long)(now - v->hot_since));
    }
}

void sd_hot_fe_event(struct sd_dom *d, struct sd_dev *v, const char *rel)
{
    if (!d->conf->standby)
        return;
    static const char slots[] = USK_FE_SLOT_DIR "/slot-";
    if (!strcmp(rel, USK_FE_STATE)) {
        if (v->hot_retry_ms == UINT64_MAX) {
            v->hot_retry_ms = 0; /* shadow-aware now: try it */
            d->hot_due = true;
        }
    } else if (!strcmp(rel, USK_FE_GENERATION) || !strcmp(rel, USK_FE_RECOVERIES)) {
        if (v->hot_slot && v->fe_known) {
            v->fe_known = false; /* read again (check_up) */
            d->hot_due = true;
        }
    } else if (!strcmp(rel, USK_FE_STANDBY)) {
        if (!v->hot_slot)
            return;
        /* Ours to write (this is our own attach, mostly): a guest's change
         * is looked into. */
        char *val = xsu_read(d->sd->xs, XBT_NULL, v->fe_path, USK_FE_STANDBY, 16);
        if (sd_parse_slot(val) != v->hot_slot) {
            v->hot_known = false;
            d->hot_due = true;
        }
        free(val);
    } else if (!strncmp(rel, slots, sizeof(slots) - 1)) {
        /* rel is shadow/slot-<x>[/...] */
        const char *nm = rel + strlen(USK_FE_SLOT_DIR) + 1;
        char name[8];
        size_t n = strcspn(nm, "/");
        snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) - 1 ? n : sizeof(name) - 1),
                 nm);
        int s = sd_parse_slot(name);
        if (s > 0 && s == v->hot_slot) {
            /* Its state may be Connected now - or, once it was, no longer
             * (a frontend that drops its idle connection sets it up
             * afresh): a switch trusts hot_up only until such an event
             * (rewire.c), so it is read again. */
            v->hot_recheck = v->hot_up;
            d->hot_due = true;
        } else if (s > 0 && s != v->hot_slot && s != v->live_slot) {
            v->stale_due = true; /* written to after it was left: tidy it */
            d->hot_due = true;
        }
    }
}

void sd_hot_tick(struct sd_dom *d, uint64_t now)
{
    /* With `standby off` too: what a run with a standby left is tidied. */
    if (d->state != DS_UP || !d->sd->xs)
        return;
    unsigned sb = sb_domid(d);
    bool ready = sb_ready(d);
    if (sb != d->hot_sb_domid) {
        sd_hot_reset(d); /* attachments to another standby are stale */
        d->hot_sb_domid = sb;
    }
    if (ready != d->hot_sb_ready) {
        d->hot_sb_ready = ready;
        d->hot_due = true;
    }
    if (!d->hot_due && now < d->hot_next_ms)
        return;
    d->hot_due = false;
    uint64_t next = UINT64_MAX;
    unsigned work = 0;
#define AT(t)                                                                                      \
    do {                                                                                           \
        if ((t) < next)                                                                            \
            next = (t);                                                                            \
    } while (0)
    for (unsigned i = 0; i < d->ndevs; i++) {
        struct sd_dev *v = d->devs[i];
        if (work >= SD_REWIRE_CHUNK) {
            d->hot_due = true; /* the rest on the next turn */
            break;
        }
        if (!v->paired)
            continue;
        if (!v->hot_known) {
            reconcile(d, v, sb, now);
            work++;
            if (!v->hot_known)
                AT(now + HOT_RETRY_MS);
        }
        if (v->stale_due) {
            stale_slots(d, v);
            work++;
            if (v->stale_due)
                AT(now + HOT_RETRY_MS);
        }
        if (v->hot_slot) {
            check_up(d, v, now);
            if (v->hot_up)
                continue;
            if (now < v->hot_since + HOT_CONNECT_MS) {
                AT(v->hot_since + HOT_CONNECT_MS);
                continue;
            }
            v->hot_refused = v->hot_domid;
            detach(d, v, v->hot_slot, v->hot_domid,
                   "its slot not Connected within 10 s (its frontend does not take slots); "
                   "rewired warm at a promotion");
            work++;
            continue;
        }
        if (!ready || !v->hot_known || v->hot_refused == sb)
            continue;
        if (now < v->hot_retry_ms) {
            if (v->hot_retry_ms != UINT64_MAX)
                AT(v->hot_retry_ms);
            continue;
        }
        attach(d, v, sb, now);
        work++;
        if (v->hot_slot)
            AT(v->hot_since + HOT_CONNECT_MS);
        else if (v->hot_retry_ms != UINT64_MAX)
            AT(v->hot_retry_ms);
    }
#undef AT
    d->hot_next_ms = next;
}

uint64_t sd_hot_wake(const struct sd_dom *d)
{
    if (d->state != DS_UP)
        return UINT64_MAX;
    if (d->hot_due || sb_ready(d) != d->hot_sb_ready || sb_domid(d) != d->hot_sb_domid)
        return sd_now();
    return d->hot_next_ms;
}
