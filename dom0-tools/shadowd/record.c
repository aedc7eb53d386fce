/* record.c - recording, while all is well, every device a driver domain
 * serves: its backend dir /local/domain/<drv>/backend/<type>/<fe>/<devid>,
 * the keys the toolstack wrote there (not what the backend publishes), and
 * its frontend dir. A device is paired when BE/frontend and FE/backend point
 * at each other (BE/frontend may name one of FE's slots: hotsb.c); only
 * paired devices are rewired on recovery. A device is
 * forgotten when its frontend dir goes (detached, or the guest is gone),
 * never because its backend dir vanished: that is what a dying driver
 * domain looks like. */
#define _GNU_SOURCE
#include "record.h"

#include "dom.h"
#include "log.h"
#include "store.h"

#include "pv-keys.h"
#include "sd_text.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 3 /* levels of keys below a backend dir */

/* Keys a backend publishes (xen/io/blkif.h, netif.h, xenbus.h, hotplug
 * scripts), plus those shadowd writes itself on rewire. The config file's
 * ignore-backend-key adds more. */
static const char *const published[] = {
    PVK_STATE,
    PVK_ONLINE,
    PVK_FRONTEND,
    PVK_FRONTEND_ID,
    PVK_HOTPLUG_STATUS,
    PVK_HOTPLUG_ERROR,
    PVK_BLK_SECTORS,
    PVK_BLK_SECTOR_SIZE,
    PVK_BLK_PHYSICAL_SECTOR_SIZE,
    PVK_BLK_INFO,
    "feature-*",
    PVK_BLK_DISCARD_GRANULARITY,
    PVK_BLK_DISCARD_ALIGNMENT,
    PVK_BLK_DISCARD_SECURE,
    PVK_BLK_MAX_RING_PAGE_ORDER,
    PVK_BLK_MAX_RING_PAGES,
    PVK_MQ_MAX_QUEUES,
    PVK_BLK_PHYSICAL_DEVICE,
    PVK_BLK_PHYSICAL_DEVICE_PATH,
    PVK_BLK_NODE,
    "kthread-pid",
};

bool sd_key_published(const struct sd *sd, const char *key)
{
    char first[128];
    size_t n = strcspn(key, "/");
    snprintf(first, sizeof(first), "%.*s", (int)(n < sizeof(first) ? n : sizeof(first) - 1), key);
    for (size_t i = 0; i < sizeof(published) / sizeof(published[0]); i++)
        if (sd_key_match(published[i], first))
            return true;
    for (unsigned i = 0; i < sd->conf->nignore; i++)
        if (sd_key_match(sd->conf->ignore_keys[i], first) ||
            sd_key_match(sd->conf->ignore_keys[i], key))
            return true;
    return false;
}

void sd_be_path(char *buf, size_t len, unsigned drv, const struct sd_dev *v)
{
    snprintf(buf, len, "/local/domain/%u/backend/%s/%u/%u", drv, v->type, v->fe, v->devid);
}

static void kv_free(struct sd_kv *kv, unsigned n)
{
    for (unsigned i = 0; kv && i < n; i++) {
        free(kv[i].k);
        free(kv[i].v);
    }
    free(kv);
}

void sd_dev_free(struct sd_dev *v)
{
    if (!v)
        return;
    kv_free(v->kv, v->nkv);
    free(v);
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const struct sd_kv *)a)->k, ((const struct sd_kv *)b)->k);
}

static bool kv_equal(const struct sd_kv *a, unsigned na, const struct sd_kv *b, unsigned nb)
{
    if (na != nb)
        return false;
    for (unsigned i = 0; i < na; i++)
        if (strcmp(a[i].k, b[i].k) || strcmp(a[i].v, b[i].v))
            return false;
    return true;
}

int sd_dev_set_kv(struct sd_dev *v, struct sd_kv *kv, unsigned n)
{
    if (n > 1) /* a vsnd backend dir has no toolstack keys at all: kv is NULL */
        qsort(kv, n, sizeof(*kv), kv_cmp);
    if (kv_equal(v->kv, v->nkv, kv, n)) {
        kv_free(kv, n);
        return 0;
    }
    kv_free(v->kv, v->nkv);
    v->kv = kv;
    v->nkv = n;
    return 1;
}

struct sd_dev *sd_record_find(struct sd_dom *d, const char *type, unsigned fe, unsigned devid)
{
    for (unsigned i = 0; i < d->ndevs; i++) {
        struct sd_dev *v = d->devs[i];
        if (v->fe == fe && v->devid == devid && !strcmp(v->type, type))
            return v;
    }
    return NULL;
}

struct sd_dev *sd_record_add(struct sd_dom *d, const char *type, unsigned fe, unsigned devid)
{
    if (d->ndevs >= d->conf->max_devices || strlen(type) >= sizeof(((struct sd_dev *)0)->type)) {
        errno = ENOSPC;
        return NULL;
    }
    struct sd_dev **nd = realloc(d->devs, (d->ndevs + 1) * sizeof(*nd));
    if (!nd)
        return NULL;
    d->devs = nd;
    struct sd_dev *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    snprintf(v->type, sizeof(v->type), "%s", type);
    v->fe = fe;
    v->devid = devid;
    d->devs[d->ndevs++] = v;
    return v;
}

/* A forgotten device's connection to the hot standby (hotsb.c) goes with
 * it: the standby's backend dir shadowd wrote, and, if the frontend dir is
 * still there (pointed elsewhere), the slot and FE/shadow/standby. */
static void drop_hot(struct sd_dom *d, const struct sd_dev *v)
{
    struct xs_handle *xs = d->sd->xs;
    char be[160], slot[192], sb[192];
    if (!xs || !v->hot_slot || !v->hot_domid)
        return;
    sd_be_path(be, sizeof(be), v->hot_domid, v);
    char *f = xsu_read(xs, XBT_NULL, be, PVK_FRONTEND, 256);
    bool ours = f && sd_slot_path(slot, sizeof(slot), v->fe_path, v->hot_slot) && !strcmp(f, slot);
    free(f);
    if (!ours)
        return;
    xs_rm(xs, XBT_NULL, be);
    if (xsu_path(sb, sizeof(sb), v->fe_path, USK_FE_STANDBY))
        xs_rm(xs, XBT_NULL, sb);
    xs_rm(xs, XBT_NULL, slot);
}

void sd_record_drop(struct sd_dom *d, struct sd_dev *v, const char *why)
{
    for (unsigned i = 0; i < d->ndevs; i++) {
        if (d->devs[i] != v)
            continue;
        if (v->paired)
            sd_dlog(d, "forgetting %s %u of guest %u: %s", v->type, v->devid, v->fe, why);
        drop_hot(d, v);
        sd_store_unwatch_dev(d, v);
        d->devs[i] = d->devs[--d->ndevs];
        sd_dev_free(v);
        d->devs_dirty = true;
        return;
    }
}

/* Read the toolstack keys below dir (recursively) into *kv. rel is the
 * prefix of their names. 0, or -1 with errno. */
static int read_keys(struct sd_dom *d, const char *dir, const char *rel, int depth,
                     struct sd_kv **kv, unsigned *n)
{
    struct xs_handle *xs = d->sd->xs;
    unsigned nk = 0;
    char **keys = xs_directory(xs, XBT_NULL, dir, &nk);
    if (!keys)
        return errno == ENOENT && depth > 0 ? 0 : -1; /* a child removed meanwhile */
    int rc = 0;
    for (unsigned i = 0; i < nk && rc == 0; i++) {
        char name[512], path[1024];
        if (snprintf(name, sizeof(name), "%s%s%s", rel, *rel ? "/" : "", keys[i]) >=
                (int)sizeof(name) ||
            !xsu_path(path, sizeof(path), dir, keys[i])) {
            errno = ENAMETOOLONG;
            rc = -1;
            break;
        }
        if (sd_key_published(d->sd, name))
            continue;
        char *val = xsu_read(xs, XBT_NULL, path, NULL, SD_MAX_VALUE);
        if (!val) {
            if (errno == ENOENT)
                continue;
            rc = -1;
            break;
        }
        unsigned nchild = 0;
        char **sub = depth + 1 < MAX_DEPTH ? xs_directory(xs, XBT_NULL, path, &nchild) : NULL;
        free(sub);
        if (nchild && depth + 1 < MAX_DEPTH) {
            rc = read_keys(d, path, name, depth + 1, kv, n);
            if (!*val) { /* an intermediate dir: its children are the record */
                free(val);
                continue;
            }
        }
        if (*n >= SD_MAX_KEYS) {
            free(val);
            errno = E2BIG;
            rc = -1;
            break;
        }
        struct sd_kv *nkv = realloc(*kv, (*n + 1) * sizeof(**kv));
        char *k = strdup(name);
        if (!nkv || !k) {
            free(k);
            free(val);
            if (nkv)
                *kv = nkv;
            rc = -1;
            break;
        }
        *kv = nkv;
        (*kv)[*n].k = k;
        (*kv)[*n].v = val;
        (*n)++;
    }
    free(keys);
    return rc;
}

/* Does FE/backend (and backend-id) of v point at drv's backend dir? */
static bool fe_points_at(struct sd_dom *d, const struct sd_dev *v, unsigned drv, bool *fe_gone)
{
    struct xs_handle *xs = d->sd->xs;
    char be[160];
    sd_be_path(be, sizeof(be), drv, v);
    *fe_gone = false;
    char *b = xsu_read(xs, XBT_NULL, v->fe_path, PVK_BACKEND, 256);
    if (!b) {
        if (errno == ENOENT) {
            char *self = xsu_read(xs, XBT_NULL, v->fe_path, NULL, SD_MAX_VALUE);
            if (!self && errno == ENOENT)
                *fe_gone = true;
            free(self);
        }
        return false;
    }
    bool ok = !strcmp(b, be);
    free(b);
    uint64_t id;
    return ok && xsu_read_u64(xs, XBT_NULL, v->fe_path, PVK_BACKEND_ID, 0x7FEF, &id) == 0 &&
           id == drv;
}

/* BE/frontend must be /local/domain/<fe>/device/<word>/<devid> for the
 * backend dir's own <fe> and <devid>, or one of that dir's slots
 * (.../shadow/slot-a|b, a hot standby's connection after a promotion): the
 * driver domain owns its backend dir, and shadowd must never be steered into
 * writing another guest's store. out gets the frontend dir, *slot which of
 * its dirs the value names (0: the frontend dir itself). */
static int check_frontend(const char *val, unsigned fe, unsigned devid, char *out, size_t len,
                          int *slot)
{
    char pre[64];
    int n = snprintf(pre, sizeof(pre), "/local/domain/%u/device/", fe);
    if (strncmp(val, pre, (size_t)n))
        return -1;
    const char *t = val + n, *slash = strchr(t, '/');
    if (!slash || slash == t || slash - t > 31)
        return -1;
    for (const char *c = t; c < slash; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
            return -1;
    char id[16];
    size_t idlen = strcspn(slash + 1, "/");
    uint64_t v;
    if (idlen >= sizeof(id))
        return -1;
    memcpy(id, slash + 1, idlen);
    id[idlen] = 0;
    if (sd_parse_u64(id, UINT32_MAX, &v) < 0 || v != devid)
        return -1;
    size_t felen = (size_t)(slash + 1 - val) + idlen;
    if (felen >= len)
        return -1;
    snprintf(out, len, "%.*s", (int)felen, val);
    *slot = sd_front_which(out, val);
    return *slot < 0 ? -1 : 0;
}

/* (Re)read one backend dir of the current domain. */
static void read_dev(struct sd_dom *d, const char *type, unsigned fe, unsigned devid)
{
    struct xs_handle *xs = d->sd->xs;
    struct sd_dev *v = sd_record_find(d, type, fe, devid);
    char be[160];
    snprintf(be, sizeof(be), "/local/domain/%u/backend/%s/%u/%u", d->srv.domid, type, fe, devid);
    if (d->state != DS_UP) {
        /* Mid-recovery the records are the truth; the new dirs are ours. */
        if (v)
            v->be_seen = true;
        return;
    }
    char *front = xsu_read(xs, XBT_NULL, be, PVK_FRONTEND, 256);
    if (!front) {
        if (errno == ENOENT && v) {
            v->be_seen = false;
            if (!v->paired)
                sd_record_drop(d, v, "backend dir removed before it was paired");
        }
        return;
    }
    char fe_path[160];
    int live;
    if (check_frontend(front, fe, devid, fe_path, sizeof(fe_path), &live) < 0) {
        if (!v)
            sd_dlog(d,
                    "%s: frontend '%s' is not /local/domain/%u/device/<type>/%u (or a slot of "
                    "it); not recorded",
                    be, front, fe, devid);
        free(front);
        return;
    }
    free(front);
    struct sd_kv *kv = NULL;
    unsigned nkv = 0;
    if (read_keys(d, be, "", 0, &kv, &nkv) < 0) {
        if (errno != ENOENT)
            sd_dlog(d, "reading %s: %s; record unchanged", be, strerror(errno));
        kv_free(kv, nkv);
        return;
    }
    bool added = false;
    if (!v) {
        v = sd_record_add(d, type, fe, devid);
        if (!v) {
            sd_dlog(d, "cannot record %s: %s (max-devices %u)", be, strerror(errno),
                    d->conf->max_devices);
            kv_free(kv, nkv);
            return;
        }
        added = true;
    }
    v->be_seen = true;
    v->live_slot = live;
    if (strcmp(v->fe_path, fe_path) && v->frozen) {
        /* Frozen with its keys: following the driver domain to another
         * frontend dir of the guest would unpair the device, and a frontend
         * dir that does not exist would make it forgotten, then recorded
         * afresh with whatever keys the driver domain wrote meanwhile. */
        if (!v->tamper_logged)
            sd_dlog(d,
                    "%s %u of guest %u: %s/" PVK_FRONTEND " is now '%s', not %s; not followed "
                    "(the driver domain owns that dir)",
                    v->type, v->devid, v->fe, be, fe_path, v->fe_path);
        v->tamper_logged = true;
    } else if (strcmp(v->fe_path, fe_path)) {
        sd_store_unwatch_dev(d, v);
        snprintf(v->fe_path, sizeof(v->fe_path), "%s", fe_path);
        d->devs_dirty = true;
    }
    if (!v->frozen) {
        if (sd_dev_set_kv(v, kv, nkv) && v->paired) {
            sd_dlog(d, "%s %u of guest %u: toolstack keys changed (%u keys)", v->type, v->devid,
                    v->fe, v->nkv);
            d->devs_dirty = true;
        }
    } else {
        if (nkv > 1)
            qsort(kv, nkv, sizeof(*kv), kv_cmp);
        if (!kv_equal(v->kv, v->nkv, kv, nkv) && !v->tamper_logged) {
            sd_dlog(d,
                    "%s %u of guest %u: toolstack keys in %s changed after the device was "
                    "paired; not recorded (the driver domain owns that dir: a restart restores "
                    "the keys as paired; the toolstack re-attaches a device to change them)",
                    v->type, v->devid, v->fe, be);
            v->tamper_logged = true;
        }
        kv_free(kv, nkv);
    }
    sd_store_watch_dev(d, v);
    bool gone;
    bool paired = fe_points_at(d, v, d->srv.domid, &gone);
    if (paired && !v->paired) {
        sd_dlog(d, "recording %s %u of guest %u (%s, %u toolstack keys)", v->type, v->devid, v->fe,
                v->fe_path, v->nkv);
        v->frozen = true;
        if (added || !v->report[0]) { /* what is there now is old news */
            char *r = xsu_read(xs, XBT_NULL, v->fe_path, USK_FE_REPORT, SD_REPORT_MAX);
            snprintf(v->report, sizeof(v->report), "%s", r ? r : "");
            free(r);
        }
        d->devs_dirty = true;
        d->hot_due = true; /* a hot standby's connection for it (hotsb.c) */
    }
    v->paired = paired;
}

/* Split "<type>/<fe>/<devid>[/key...]" into its parts. */
static int split_be(const char *rel, char *type, size_t tlen, unsigned *fe, unsigned *devid,
                    const char **key)
{
    char parts[3][32];
    const char *p = rel;
    for (int i = 0; i < 3; i++) {
        size_t n = strcspn(p, "/");
        if (n == 0 || n >= sizeof(parts[i]))
            return -1;
        memcpy(parts[i], p, n);
        parts[i][n] = 0;
        p += n;
        if (i < 2) {
            if (*p != '/')
                return -1;
            p++;
        }
    }
    uint64_t a, b;
    if (sd_parse_u64(parts[1], 0x7FEF, &a) < 0 || sd_parse_u64(parts[2], UINT32_MAX, &b) < 0 ||
        strlen(parts[0]) >= tlen)
        return -1;
    snprintf(type, tlen, "%s", parts[0]);
    *fe = (unsigned)a;
    *devid = (unsigned)b;
    *key = *p == '/' ? p + 1 : "";
    return 0;
}

void sd_record_be_event(struct sd_dom *d, const char *path)
{
    char pre[64];
    int n = snprintf(pre, sizeof(pre), "/local/domain/%u/" PVK_BACKEND, d->srv.domid);
    if (!d->srv.domid || strncmp(path, pre, (size_t)n) || (path[n] && path[n] != '/'))
        return;
    const char *rel = path[n] ? path + n + 1 : "";
    char type[32];
    unsigned fe, devid;
    const char *key;
    if (split_be(rel, type, sizeof(type), &fe, &devid, &key) < 0) {
        d->scan_due = true; /* a type or guest dir came or went */
        return;
    }
    struct sd_dev *v = sd_record_find(d, type, fe, devid);
    if (v && *key && sd_key_published(d->sd, key))
        return; /* the backend publishing: nothing for the record */
    read_dev(d, type, fe, devid);
}

void sd_record_fe_check(struct sd_dom *d, struct sd_dev *v)
{
    if (d->state != DS_UP)
        return;
    bool gone;
    bool ok = fe_points_at(d, v, d->srv.domid, &gone);
    if (gone) {
        sd_record_drop(d, v, "its frontend dir is gone");
    } else if (!ok && v->paired) {
        char *b = xsu_read(d->sd->xs, XBT_NULL, v->fe_path, PVK_BACKEND, 256);
        if (b || errno == ENOENT) {
            char why[320];
            snprintf(why, sizeof(why), "the frontend now points at '%s'", b ? b : "(nothing)");
            sd_record_drop(d, v, why);
        }
        free(b);
    } else if (ok && !v->paired) {
        read_dev(d, v->type, v->fe, v->devid);
    }
}

void sd_record_scan(struct sd_dom *d)
{
    struct xs_handle *xs = d->sd->xs;
    d->scan_due = false;
    if (!d->srv.domid || !xs)
        return;
    for (unsigned i = 0; i < d->ndevs; i++)
        d->devs[i]->be_seen = false;
    char base[64];
    snprintf(base, sizeof(base), "/local/domain/%u/" PVK_BACKEND, d->srv.domid);
    unsigned nt = 0, budget = d->conf->max_devices * 2 + 16;
    char **types = xs_directory(xs, XBT_NULL, base, &nt);
    for (unsigned t = 0; types && t < nt && budget; t++) {
        char tdir[128];
        if (snprintf(tdir, sizeof(tdir), "%s/%s", base, types[t]) >= (int)sizeof(tdir))
            continue;
        unsigned nf = 0;
        char **fes = xs_directory(xs, XBT_NULL, tdir, &nf);
        for (unsigned f = 0; fes && f < nf && budget; f++) {
            char fdir[160];
            uint64_t fe;
            if (sd_parse_u64(fes[f], 0x7FEF, &fe) < 0 ||
                snprintf(fdir, sizeof(fdir), "%s/%s", tdir, fes[f]) >= (int)sizeof(fdir))
                continue;
            unsigned nd = 0;
            char **devs = xs_directory(xs, XBT_NULL, fdir, &nd);
            for (unsigned k = 0; devs && k < nd && budget; k++, budget--) {
                uint64_t devid;
                if (sd_parse_u64(devs[k], UINT32_MAX, &devid) == 0 &&
                    strlen(types[t]) < sizeof(((struct sd_dev *)0)->type))
                    read_dev(d, types[t], (unsigned)fe, (unsigned)devid);
            }
            free(devs);
        }
        free(fes);
    }
    free(types);
    if (d->state != DS_UP)
        return;
    for (unsigned i = d->ndevs; i-- > 0;) {
        struct sd_dev *v = d->devs[i];
        if (v->be_seen)
            continue;
        if (!v->paired) {
            sd_record_drop(d, v, "backend dir gone");
            continue;
        }
        bool gone;
        fe_points_at(d, v, d->srv.domid, &gone);
        if (gone)
            sd_record_drop(d, v, "its frontend dir is gone");
    }
}

static int cmp_uint(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

unsigned sd_record_guests(const struct sd_dom *d, unsigned *only)
{
    unsigned *fe = d->ndevs ? malloc(d->ndevs * sizeof(*fe)) : NULL, m = 0, n = 0, first = 0;
    if (d->ndevs && !fe)
        return 2; /* no memory to count them: "more than one" is the safe answer */
    for (unsigned i = 0; i < d->ndevs; i++)
        if (d->devs[i]->paired)
            fe[m++] = d->devs[i]->fe;
    if (m)
        qsort(fe, m, sizeof(*fe), cmp_uint);
    for (unsigned i = 0; i < m; i++)
        if (!i || fe[i] != fe[i - 1]) {
            if (!n)
                first = fe[i];
            n++;
        }
    free(fe);
    if (only)
        *only = n == 1 ? first : 0;
    return n;
}
