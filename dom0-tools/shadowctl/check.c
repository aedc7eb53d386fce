/* check.c - the xenstore schema checker (schema.md). Rules checked:
 *
 *  pairing   FE/backend is /local/domain/<B>/backend/<type>/<G>/<devid> for
 *            the FE's own guest G and devid; FE/backend-id is B; that BE
 *            dir exists and its frontend (FE, or one of FE's slots) and
 *            frontend-id point back; a BE dir whose frontend is gone or
 *            points elsewhere is orphaned
 *  perms     FE dir n<G>,r<B>, every node below owned by G and readable by
 *            B (but its slots); BE dir n<B>,r<G>; DRV inject n0,r<D>;
 *            shadowd's keys n0
 *  standby   no FE/backend names a backend dir under a standby (SD's
 *            standby-domid); each of the standby's backend dirs names a slot
 *            of a frontend whose shadow/standby names that slot, and the
 *            slot's backend and backend-id point back
 *  slots     FE/shadow/slot-a|b: its backend is a backend dir of the FE's
 *            guest and devid whose frontend is the slot, backend-id its
 *            domain; perms n<G>,r<its backend's domain>, below it as FE's;
 *            FE/shadow/standby a slot's name, of a slot that exists
 *  formats   FE/state, BE/state a XenbusState; FE/shadow/generation,
 *            recoveries decimal; shadow/state a state word; shadow/report
 *            and shadow/last-recovery as schema.md says; BE/cache a cache
 *            mode; DRV heartbeat decimal, inject "<seq> <fault> [<count>]";
 *            shadowd's state, domid, recoveries, last-recovery
 */
#define _GNU_SOURCE
#include "check.h"

#include "pv-keys.h"
#include "sd_text.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES    512
#define MAX_DEPTH    4
#define MAX_STANDBYS 64

struct ck {
    struct xs_handle *xs;
    FILE *out;
    struct check_result *r;
    unsigned standby[MAX_STANDBYS]; /* SD/<name>/standby-domid of every domain */
    unsigned nstandby;
};

static bool is_standby(const struct ck *c, unsigned domid)
{
    for (unsigned i = 0; i < c->nstandby; i++)
        if (c->standby[i] == domid)
            return true;
    return false;
}

/* The values quoted are any domain's: a control character (a newline that
 * would forge a line of the report) is shown as \xNN. */
static void put_clean(FILE *out, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == 0x7f)
            fprintf(out, "\\x%02x", ch);
        else
            fputc(ch, out);
    }
}

static void viol(struct ck *c, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void viol(struct ck *c, const char *path, const char *fmt, ...)
{
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    fputs("VIOLATION ", c->out);
    put_clean(c->out, path);
    fputs(": ", c->out);
    put_clean(c->out, n < 0 ? "(out of memory)" : msg);
    fputc('\n', c->out);
    if (n >= 0)
        free(msg);
    c->r->violations++;
}

static char *rd(struct ck *c, const char *dir, const char *key, size_t max)
{
    char *v = xsu_read(c->xs, XBT_NULL, dir, key, max);
    if (v)
        c->r->keys++;
    return v;
}

static char **ls(struct ck *c, const char *dir, unsigned *n)
{
    *n = 0;
    return xs_directory(c->xs, XBT_NULL, dir, n);
}

static void perms_str(char *buf, size_t len, const struct xs_permissions *p, unsigned n)
{
    size_t o = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < n && o + 16 < len; i++) {
        char k = p[i].perms == XS_PERM_NONE    ? 'n'
                 : p[i].perms == XS_PERM_READ  ? 'r'
                 : p[i].perms == XS_PERM_WRITE ? 'w'
                                               : 'b';
        o += (size_t)snprintf(buf + o, len - o, "%s%c%u", i ? "," : "", k, p[i].id);
    }
}

/* perms of path must be owner, default none, and grant reader read. */
static void want_perms(struct ck *c, const char *path, unsigned owner, int reader, bool exact)
{
    unsigned n = 0;
    struct xs_permissions *p = xs_get_permissions(c->xs, XBT_NULL, path, &n);
    if (!p) {
        if (errno != ENOENT)
            viol(c, path, "permissions unreadable: %s", strerror(errno));
        return;
    }
    char got[128], want[64];
    perms_str(got, sizeof(got), p, n);
    if (reader >= 0)
        snprintf(want, sizeof(want), "n%u,r%d", owner, reader);
    else
        snprintf(want, sizeof(want), "n%u", owner);
    bool ok = n >= 1 && p[0].id == owner && (!exact || p[0].perms == XS_PERM_NONE);
    if (reader >= 0 && ok) {
        bool found = false;
        for (unsigned i = 1; i < n; i++)
            if ((int)p[i].id == reader && (p[i].perms & XS_PERM_READ))
                found = true;
        ok = found;
    }
    if (ok && exact && n != (reader >= 0 ? 2u : 1u))
        ok = false;
    if (!ok)
        viol(c, path, "permissions %s, want %s", got, want);
    free(p);
}

/* Every node below dir: owned by owner, readable by reader; with fe set
 * (dir's frontend dir), not fe's slots, which have their own reader. */
static void want_tree_perms(struct ck *c, const char *dir, unsigned owner, unsigned reader,
                            int depth, unsigned *budget, const char *fe)
{
    unsigned n;
    char **kids = ls(c, dir, &n);
    for (unsigned i = 0; kids && i < n && *budget; i++, (*budget)--) {
        char path[1024];
        if (!xsu_path(path, sizeof(path), dir, kids[i]) || (fe && sd_front_which(fe, path) > 0))
            continue;
        want_perms(c, path, owner, (int)reader, false);
        if (depth < MAX_DEPTH)
            want_tree_perms(c, path, owner, reader, depth + 1, budget, fe);
    }
    free(kids);
}

static void want_decimal(struct ck *c, const char *dir, const char *key, uint64_t max,
                         bool required)
{
    char path[1024];
    if (!xsu_path(path, sizeof(path), dir, key))
        return;
    char *v = rd(c, dir, key, 64);
    uint64_t x;
    if (!v) {
        if (required || errno != ENOENT)
            viol(c, path, "%s", errno == ENOENT ? "missing" : strerror(errno));
        return;
    }
    if (sd_parse_u64(v, max, &x) < 0)
        viol(c, path, "'%s' is not a decimal number up to %llu", v, (unsigned long long)max);
    free(v);
}

static void check_shadow_keys(struct ck *c, const char *fe)
{
    char path[1024];
    want_decimal(c, fe, USK_FE_GENERATION, UINT64_MAX, false);
    want_decimal(c, fe, USK_FE_RECOVERIES, UINT64_MAX, false);
    want_decimal(c, fe, USK_FE_LAST_GAP, UINT64_MAX, false);
    char *v = rd(c, fe, USK_FE_STATE, 64);
    if (v && strcmp(v, USK_STATE_LIVE) && strcmp(v, USK_STATE_RECOVERING) &&
        strcmp(v, USK_STATE_FAILED))
        viol(c, xsu_path(path, sizeof(path), fe, USK_FE_STATE),
             "'%s' is not live, recovering "
             "or failed",
             v);
    free(v);
    v = rd(c, fe, USK_FE_REPORT, 4096);
    if (v) {
        struct sd_report r;
        const char *why;
        if (sd_parse_report(v, &r, &why) < 0)
            viol(c, xsu_path(path, sizeof(path), fe, USK_FE_REPORT), "'%.80s': %s", v, why);
        free(v);
    } else if (errno == EFBIG) {
        viol(c, xsu_path(path, sizeof(path), fe, USK_FE_REPORT), "longer than 4096 bytes");
    }
    v = rd(c, fe, USK_FE_LAST_RECOVERY, 256);
    if (v) {
        uint64_t f[4];
        const char *why;
        if (sd_parse_fe_last_recovery(v, f, &why) < 0)
            viol(c, xsu_path(path, sizeof(path), fe, USK_FE_LAST_RECOVERY), "'%s': %s", v, why);
        free(v);
    }
}

/* Is be /local/domain/<B>/backend/<type>/<g>/<devid>? Then 0 and *b. */
static int parse_be(const char *be, unsigned g, const char *devid, unsigned *b)
{
    unsigned bg;
    char bt[64], bdev[64];
    int nch = 0;
    if (sscanf(be, "/local/domain/%u/backend/%63[a-z0-9_-]/%u/%63[0-9]%n", b, bt, &bg, bdev,
               &nch) != 4 ||
        be[nch] || bg != g || strcmp(bdev, devid))
        return -1;
    return 0;
}

/* What every frontend dir of guest g served by domain b has, FE or a slot:
 * backend-id, state, its permissions and its subtree's (below root's own
 * slots, which have theirs; root NULL: all of it). */
static void check_front_dir(struct ck *c, const char *dir, unsigned g, unsigned b, const char *root)
{
    char path[1024];
    uint64_t id;
    if (xsu_read_u64(c->xs, XBT_NULL, dir, PVK_BACKEND_ID, 0x7FEF, &id) < 0 || id != b)
        viol(c, xsu_path(path, sizeof(path), dir, PVK_BACKEND_ID), "want %u, as in backend", b);
    want_decimal(c, dir, PVK_STATE, 7, true);
    want_perms(c, dir, g, (int)b, true);
    unsigned budget = MAX_NODES;
    want_tree_perms(c, dir, g, b, 0, &budget, root);
}

/* One slot of FE (schema.md, "The hot standby's connection"). */
static void check_slot(struct ck *c, unsigned g, const char *devid, const char *fe,
                       const char *slot)
{
    char path[1024];
    unsigned b;
    char *be = rd(c, slot, PVK_BACKEND, 1024);
    if (!be) {
        viol(c, slot, "a slot without a backend");
        return;
    }
    if (parse_be(be, g, devid, &b) < 0) {
        viol(c, xsu_path(path, sizeof(path), slot, PVK_BACKEND),
             "'%s' is not /local/domain/<drv>/backend/<type>/%u/%s", be, g, devid);
        free(be);
        return;
    }
    check_front_dir(c, slot, g, b, NULL);
    char *front = rd(c, be, PVK_FRONTEND, 1024);
    if (!front)
        viol(c, slot, "its backend dir %s is missing (or has no frontend key)", be);
    else if (strcmp(front, slot))
        viol(c, xsu_path(path, sizeof(path), be, PVK_FRONTEND), "'%s', want the slot '%s'", front,
             slot);
    free(front);
    (void)fe;
    free(be);
}

/* FE's slots, and FE/shadow/standby. */
static void check_slots(struct ck *c, unsigned g, const char *devid, const char *fe)
{
    char path[1024], slot[1024];
    for (int s = SD_SLOT_A; s <= SD_SLOT_B; s++) {
        if (!sd_slot_path(slot, sizeof(slot), fe, s))
            continue;
        char *self = rd(c, slot, NULL, 64);
        if (!self && errno == ENOENT)
            continue;
        free(self);
        check_slot(c, g, devid, fe, slot);
    }
    char *sb = rd(c, fe, USK_FE_STANDBY, 64);
    if (sb) {
        int s = sd_parse_slot(sb);
        char *self =
            s > 0 && sd_slot_path(slot, sizeof(slot), fe, s) ? rd(c, slot, NULL, 64) : NULL;
        if (s < 0)
            viol(c, xsu_path(path, sizeof(path), fe, USK_FE_STANDBY),
                 "'%s' is not slot-a or slot-b", sb);
        else if (!self)
            viol(c, xsu_path(path, sizeof(path), fe, USK_FE_STANDBY), "names %s, which is missing",
                 sb);
        free(self);
        free(sb);
    }
}

/* One frontend dir FE of guest g. */
static void check_fe(struct ck *c, unsigned g, const char *type, const char *devid, const char *fe)
{
    char *be = rd(c, fe, PVK_BACKEND, 1024);
    char *sh = rd(c, fe, "shadow", 64);
    bool shadow = sh != NULL;
    free(sh);
    if (!be) {
        if (shadow)
            viol(c, fe, "has shadow/ keys but no backend");
        return;
    }
    c->r->frontends++;
    char path[1024];
    unsigned b;
    if (parse_be(be, g, devid, &b) < 0) {
        viol(c, xsu_path(path, sizeof(path), fe, PVK_BACKEND),
             "'%s' is not /local/domain/<drv>/backend/<type>/%u/%s", be, g, devid);
        free(be);
        return;
    }
    if (is_standby(c, b))
        viol(c, xsu_path(path, sizeof(path), fe, PVK_BACKEND),
             "'%s' is under the standby domain %u (a standby serves nothing)", be, b);
    check_front_dir(c, fe, g, b, fe);
    if (shadow) {
        check_shadow_keys(c, fe);
        check_slots(c, g, devid, fe);
    }
    char *front = rd(c, be, PVK_FRONTEND, 1024);
    if (!front) {
        viol(c, be, "the backend dir of %s is missing (or has no frontend key)", fe);
    } else {
        if (sd_front_which(fe, front) < 0)
            viol(c, xsu_path(path, sizeof(path), be, PVK_FRONTEND),
                 "'%s', want '%s' or one of its slots", front, fe);
        uint64_t id;
        if (xsu_read_u64(c->xs, XBT_NULL, be, PVK_FRONTEND_ID, 0x7FEF, &id) < 0 || id != g)
            viol(c, xsu_path(path, sizeof(path), be, PVK_FRONTEND_ID), "want %u", g);
    }
    free(front);
    (void)type;
    free(be);
}

/* One backend dir of driver domain d. */
static void check_be(struct ck *c, unsigned d, unsigned g, const char *be)
{
    c->r->backends++;
    char path[1024];
    want_decimal(c, be, PVK_STATE, 7, true);
    want_perms(c, be, d, (int)g, true);
    char *cache = rd(c, be, USK_BE_CACHE, 64);
    if (cache && strcmp(cache, "none") && strcmp(cache, "writeback") && strcmp(cache, "volatile"))
        viol(c, xsu_path(path, sizeof(path), be, USK_BE_CACHE),
             "'%s' is not none, writeback or volatile", cache);
    free(cache);
    char *fe = rd(c, be, PVK_FRONTEND, 1024);
    if (!fe) {
        viol(c, be, "no frontend key");
        return;
    }
    char *back = rd(c, fe, PVK_BACKEND, 1024);
    if (!back)
        viol(c, be, "orphaned: its frontend %s is gone", fe);
    else if (strcmp(back, be))
        viol(c, be, "orphaned: its frontend %s points at %s", fe, back);
    free(back);
    free(fe);
}

static void check_drv(struct ck *c, unsigned d, const char *dom)
{
    char path[1024];
    want_decimal(c, dom, USK_DRV_HEARTBEAT, UINT64_MAX, false);
    char *v = rd(c, dom, USK_DRV_INJECT, 256);
    if (v) {
        uint64_t seq, cnt;
        bool has;
        char f[32];
        const char *why;
        xsu_path(path, sizeof(path), dom, USK_DRV_INJECT);
        if (sd_parse_inject(v, &seq, f, sizeof(f), &cnt, &has, &why) < 0)
            viol(c, path, "'%s': %s", v, why);
        want_perms(c, path, 0, (int)d, true);
        free(v);
    }
}

/* One backend dir of a standby: a hot standby's connection (schema.md). */
static void check_standby_be(struct ck *c, unsigned sb, const char *be)
{
    char path[1024], fe[1024];
    char *front = rd(c, be, PVK_FRONTEND, 1024);
    if (!front)
        return; /* check_be says so */
    /* front is FE/shadow/slot-x: FE is what is before "/shadow/". */
    const char *cut = strstr(front, "/" USK_FE_SLOT_DIR "/");
    int s = -1;
    if (cut && (size_t)(cut - front) < sizeof(fe)) {
        snprintf(fe, sizeof(fe), "%.*s", (int)(cut - front), front);
        s = sd_front_which(fe, front);
    }
    if (s <= 0) {
        viol(c, be,
             "a backend dir of the standby domain %u whose frontend '%s' is not a slot (a "
             "standby serves nothing)",
             sb, front);
        free(front);
        return;
    }
    char *held = rd(c, fe, USK_FE_STANDBY, 64);
    if (!held || sd_parse_slot(held) != s)
        viol(c, be, "names %s, but %s/%s is '%s'", front, fe, USK_FE_STANDBY,
             held ? held : "(absent)");
    free(held);
    char *back = rd(c, front, PVK_BACKEND, 1024);
    uint64_t id;
    if (!back || strcmp(back, be))
        viol(c, xsu_path(path, sizeof(path), front, PVK_BACKEND), "'%s', want '%s'",
             back ? back : "(absent)", be);
    else if (xsu_read_u64(c->xs, XBT_NULL, front, PVK_BACKEND_ID, 0x7FEF, &id) < 0 || id != sb)
        viol(c, xsu_path(path, sizeof(path), front, PVK_BACKEND_ID), "want %u", sb);
    free(back);
    free(front);
}

/* Every backend dir under the standby domain sb. */
static void check_standby_dirs(struct ck *c, unsigned sb)
{
    char bk[64];
    snprintf(bk, sizeof(bk), "/local/domain/%u/" PVK_BACKEND, sb);
    unsigned nt;
    char **types = ls(c, bk, &nt);
    for (unsigned t = 0; types && t < nt; t++) {
        char tdir[160];
        unsigned ng;
        snprintf(tdir, sizeof(tdir), "%s/%s", bk, types[t]);
        char **gs = ls(c, tdir, &ng);
        for (unsigned k = 0; gs && k < ng; k++) {
            char gdir[256];
            unsigned nv;
            snprintf(gdir, sizeof(gdir), "%s/%s", tdir, gs[k]);
            char **ids = ls(c, gdir, &nv);
            for (unsigned j = 0; ids && j < nv; j++) {
                char be[320];
                snprintf(be, sizeof(be), "%s/%s", gdir, ids[j]);
                check_standby_be(c, sb, be);
            }
            free(ids);
        }
        free(gs);
    }
    free(types);
}

/* The standbys' domids, before the frontends are looked at. */
static void find_standbys(struct ck *c)
{
    unsigned n;
    char **names = ls(c, USK_SD_DIR, &n);
    for (unsigned i = 0; names && i < n && c->nstandby < MAX_STANDBYS; i++) {
        char dir[512];
        uint64_t id;
        snprintf(dir, sizeof(dir), "%s/%s", USK_SD_DIR, names[i]);
        if (xsu_read_u64(c->xs, XBT_NULL, dir, USK_SD_STANDBY_DOMID, 0x7FEF, &id) == 0)
            c->standby[c->nstandby++] = (unsigned)id;
    }
    free(names);
}

static void check_shadowd(struct ck *c)
{
    unsigned n;
    char **names = ls(c, USK_SD_DIR, &n);
    for (unsigned i = 0; names && i < n; i++) {
        char dir[512], path[1024];
        snprintf(dir, sizeof(dir), "%s/%s", USK_SD_DIR, names[i]);
        if (!sd_valid_name(names[i]))
            viol(c, dir, "not a domain name shadowd would use");
        want_perms(c, dir, 0, -1, false);
        char *st = rd(c, dir, USK_SD_STATE, 64);
        if (!st)
            viol(c, dir, "no %s", USK_SD_STATE);
        else if (strcmp(st, USK_SD_STATE_UP) && strcmp(st, USK_SD_STATE_STARTING) &&
                 strcmp(st, USK_SD_STATE_RECOVERING) && strcmp(st, USK_SD_STATE_FAILED))
            viol(c, xsu_path(path, sizeof(path), dir, USK_SD_STATE), "'%s' is not a state word",
                 st);
        free(st);
        want_decimal(c, dir, USK_SD_DOMID, 0x7FEF, false);
        want_decimal(c, dir, USK_SD_STANDBY_DOMID, 0x7FEF, false);
        char *sb = rd(c, dir, USK_SD_STANDBY, 64);
        if (sb && strcmp(sb, USK_SD_STANDBY_NONE) && strcmp(sb, USK_SD_STANDBY_BOOTING) &&
            strcmp(sb, USK_SD_STANDBY_HELD) && strcmp(sb, USK_SD_STANDBY_READY) &&
            strcmp(sb, USK_SD_STANDBY_FAILED))
            viol(c, xsu_path(path, sizeof(path), dir, USK_SD_STANDBY),
                 "'%s' is not a standby state word", sb);
        free(sb);
        char *sbid = rd(c, dir, USK_SD_STANDBY_DOMID, 16);
        uint64_t id;
        if (sbid && sd_parse_u64(sbid, 0x7FEF, &id) == 0)
            check_standby_dirs(c, (unsigned)id);
        free(sbid);
        want_decimal(c, dir, USK_SD_RECOVERIES, UINT64_MAX, false);
        char *lr = rd(c, dir, USK_SD_LAST_RECOVERY, 256);
        if (lr) {
            unsigned long long a, b2, cc, dd, e;
            int end = 0;
            if (sscanf(lr, "detect=%llu restart=%llu rewire=%llu reconnect=%llu total=%llu%n", &a,
                       &b2, &cc, &dd, &e, &end) != 5 ||
                lr[end])
                viol(c, xsu_path(path, sizeof(path), dir, USK_SD_LAST_RECOVERY),
                     "'%s' is not detect= restart= rewire= reconnect= total=", lr);
            free(lr);
        }
    }
    free(names);
}

int sd_check_store(struct xs_handle *xs, FILE *out, struct check_result *res)
{
    struct ck c = {.xs = xs, .out = out, .r = res};
    memset(res, 0, sizeof(*res));
    unsigned nd;
    find_standbys(&c);
    char **doms = ls(&c, "/local/domain", &nd);
    if (!doms) {
        fprintf(out, "cannot list /local/domain: %s\n", strerror(errno));
        return -1;
    }
    for (unsigned i = 0; i < nd; i++) {
        uint64_t id;
        if (sd_parse_u64(doms[i], 0x7FEF, &id) < 0)
            continue;
        unsigned d = (unsigned)id;
        char dom[64], dev[96], bk[96];
        snprintf(dom, sizeof(dom), "/local/domain/%u", d);
        snprintf(dev, sizeof(dev), "%s/device", dom);
        snprintf(bk, sizeof(bk), "%s/" PVK_BACKEND, dom);
        check_drv(&c, d, dom);
        unsigned nt;
        char **types = ls(&c, dev, &nt);
        for (unsigned t = 0; types && t < nt; t++) {
            char tdir[160];
            snprintf(tdir, sizeof(tdir), "%s/%s", dev, types[t]);
            unsigned nv;
            char **ids = ls(&c, tdir, &nv);
            for (unsigned k = 0; ids && k < nv; k++) {
                char fe[256];
                snprintf(fe, sizeof(fe), "%s/%s", tdir, ids[k]);
                check_fe(&c, d, types[t], ids[k], fe);
            }
            free(ids);
        }
        free(types);
        types = ls(&c, bk, &nt);
        for (unsigned t = 0; types && t < nt; t++) {
            char tdir[160];
            snprintf(tdir, sizeof(tdir), "%s/%s", bk, types[t]);
            unsigned ng;
            char **gs = ls(&c, tdir, &ng);
            for (unsigned k = 0; gs && k < ng; k++) {
                uint64_t g;
                char gdir[256];
                snprintf(gdir, sizeof(gdir), "%s/%s", tdir, gs[k]);
                if (sd_parse_u64(gs[k], 0x7FEF, &g) < 0) {
                    viol(&c, gdir, "not a frontend domid");
                    continue;
                }
                unsigned nv;
                char **ids = ls(&c, gdir, &nv);
                for (unsigned j = 0; ids && j < nv; j++) {
                    char be[320];
                    snprintf(be, sizeof(be), "%s/%s", gdir, ids[j]);
                    check_be(&c, d, (unsigned)g, be);
                }
                free(ids);
            }
            free(gs);
        }
        free(types);
    }
    free(doms);
    check_shadowd(&c);
    return 0;
}
