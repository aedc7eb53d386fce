/* shadowd_record - shadowd's recording of the devices a driver domain serves
 * (dom0-tools/shadowd/record.c), over fuzz/fake_xs.c holding the input's
 * keys: sd_record_scan (every backend dir of the serving domain: type, guest
 * and devid names), read_dev with check_frontend (BE/frontend must be the
 * backend dir's own guest's /local/domain/<fe>/device/<word>/<devid>),
 * read_keys (the toolstack keys, recursively, less those a backend
 * publishes and the config's ignore patterns), fe_points_at (the pairing),
 * then the driver domain rewriting its backend tree: sd_record_be_event per
 * write or removal (split_be) as the watch fires, the periodic
 * sd_record_scan, sd_record_fe_check as the frontend watches fire.
 * Checked: at most max-devices records; each one's frontend dir is its own
 * guest's; recorded keys sorted, unique, none published, values bounded; a
 * paired device's frontend points at its backend dir; a device paired in
 * round 1 keeps exactly its toolstack keys through whatever the driver
 * domain writes in round 2 (they are frozen).
 * Input: a flags byte (bit 0: the config ignores "script*" and "*-x"; bit 1:
 * the domain is recovering during round 2), a byte of max-devices (1 + n % 8),
 * then lines: round 1 (the guests' and the driver domain's keys: "path=value"
 * relative to /local/domain/2/backend or absolute, "!path" removes), a line
 * "--", round 2 (the driver domain's writes: relative paths only).
 * shadowd's log (log.c) is replaced here by a formatter into a buffer. */
#define _GNU_SOURCE
#include "dom.h"
#include "fake_xs.h"
#include "fuzz.h"
#include "log.h"
#include "record.h"
#include "sd_text.h"

#include <stdarg.h>

#define DRV  2u
#define BASE "/local/domain/2/backend"

/* ---- log.c's calls: formatted (so the arguments are checked), not printed ---- */
static char logbuf[1024];
static int show_log = -1; /* FUZZ_LOG=1 prints it (replaying an input) */

static void logged(void)
{
    if (show_log < 0)
        show_log = getenv("FUZZ_LOG") != NULL;
    if (show_log)
        fprintf(stderr, "shadowd: %s\n", logbuf);
}

uint64_t sd_now(void)
{
    return 0;
}

void sd_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(logbuf, sizeof(logbuf), fmt, ap);
    va_end(ap);
    logged();
}

void sd_dlog(const struct sd_dom *d, const char *fmt, ...)
{
    FZ_CHECK(d->conf && d->conf->name[0]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(logbuf, sizeof(logbuf), fmt, ap);
    va_end(ap);
    logged();
}

/* Apply one line; the full path it touched goes to out (for the watch event). */
static bool apply(const char *line, size_t len, bool relative_only, char *out, size_t olen)
{
    bool rm = len && *line == '!';
    const char *p = line + rm, *end = line + len;
    const char *eq = rm ? end : memchr(p, '=', (size_t)(end - p));
    if (!eq || eq == p)
        return false;
    bool abs = *p == '/';
    if (abs && relative_only)
        return false;
    int n = abs ? snprintf(out, olen, "%.*s", (int)(eq - p), p)
                : snprintf(out, olen, BASE "/%.*s", (int)(eq - p), p);
    if (n <= 0 || (size_t)n >= olen)
        return false;
    if (rm)
        xs_rm(fxs_handle(), XBT_NULL, out);
    else
        fxs_set(out, eq + 1, (size_t)(end - eq - 1));
    return true;
}

static void check_records(struct sd_dom *d)
{
    FZ_CHECK(d->ndevs <= d->conf->max_devices);
    for (unsigned i = 0; i < d->ndevs; i++) {
        const struct sd_dev *v = d->devs[i];
        FZ_CHECK(v->type[0] && strlen(v->type) < sizeof(v->type));
        for (unsigned j = 0; j < i; j++) {
            const struct sd_dev *w = d->devs[j];
            FZ_CHECK(w->fe != v->fe || w->devid != v->devid || strcmp(w->type, v->type));
        }
        if (v->fe_path[0]) { /* the guest's own device dir, and this devid's */
            char pre[64];
            int n = snprintf(pre, sizeof(pre), "/local/domain/%u/device/", v->fe);
            FZ_CHECK(!strncmp(v->fe_path, pre, (size_t)n));
            const char *last = strrchr(v->fe_path, '/');
            FZ_CHECK(last > v->fe_path + n);
            FZ_CHECK(memchr(v->fe_path + n, '/', (size_t)(last - v->fe_path - n)) == NULL);
            uint64_t id;
            FZ_CHECK(sd_parse_u64(last + 1, UINT32_MAX, &id) == 0 && id == v->devid);
        }
        FZ_CHECK(v->nkv <= SD_MAX_KEYS && (v->nkv == 0 || v->kv));
        for (unsigned k = 0; k < v->nkv; k++) {
            FZ_CHECK(v->kv[k].k && v->kv[k].v && v->kv[k].k[0]);
            FZ_CHECK(strlen(v->kv[k].v) <= SD_MAX_VALUE);
            FZ_CHECK(!sd_key_published(d->sd, v->kv[k].k));
            if (k)
                FZ_CHECK(strcmp(v->kv[k - 1].k, v->kv[k].k) < 0);
        }
        if (v->paired) {
            FZ_CHECK(v->frozen && v->fe_path[0]);
            char be[160], key[200];
            sd_be_path(be, sizeof(be), DRV, v);
            snprintf(key, sizeof(key), "%s/backend", v->fe_path);
            char *b = xs_read(fxs_handle(), XBT_NULL, key, NULL);
            FZ_CHECK(b && !strcmp(b, be));
            free(b);
        }
    }
}

struct snap {
    char type[32];
    unsigned fe, devid, nkv;
    struct sd_kv *kv;
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    static char *ignore[] = {"script*", "*-x"};
    static struct sd_conf conf;
    static struct sd_domconf dc;
    memset(&conf, 0, sizeof(conf));
    memset(&dc, 0, sizeof(dc));
    snprintf(dc.name, sizeof(dc.name), "drv");
    dc.max_devices = 1 + data[1] % 8;
    if (data[0] & 1) {
        conf.ignore_keys = ignore;
        conf.nignore = 2;
    }
    struct sd sd;
    memset(&sd, 0, sizeof(sd));
    sd.conf = &conf;
    sd.xs = fxs_handle();
    static struct sd_dom d;
    memset(&d, 0, sizeof(d));
    d.sd = &sd;
    d.conf = &dc;
    d.srv.domid = DRV;
    d.state = DS_UP;

    fxs_reset();
    const char *text = (const char *)data + 2, *end = (const char *)data + size;
    char path[512];
    /* round 1: the store as the toolstack, the guests and the driver domain left it */
    while (text < end) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        const char *le = nl ? nl : end;
        if (le - text == 2 && !memcmp(text, "--", 2)) {
            text = le + 1;
            break;
        }
        apply(text, (size_t)(le - text), false, path, sizeof(path));
        text = le + 1;
    }
    sd_record_scan(&d);
    for (unsigned i = d.ndevs; i-- > 0;)
        sd_record_fe_check(&d, d.devs[i]);
    check_records(&d);

    /* what was paired now is frozen */
    struct snap *was = calloc(d.ndevs + 1, sizeof(*was));
    unsigned nwas = 0;
    for (unsigned i = 0; i < d.ndevs; i++) {
        const struct sd_dev *v = d.devs[i];
        if (!v->paired)
            continue;
        struct snap *s = &was[nwas++];
        snprintf(s->type, sizeof(s->type), "%s", v->type);
        s->fe = v->fe;
        s->devid = v->devid;
        s->nkv = v->nkv;
        s->kv = calloc(v->nkv + 1, sizeof(*s->kv));
        for (unsigned k = 0; k < v->nkv; k++) {
            s->kv[k].k = strdup(v->kv[k].k);
            s->kv[k].v = strdup(v->kv[k].v);
        }
    }

    /* round 2: the driver domain writes its backend tree; each write is a watch event */
    if (data[0] & 2)
        d.state = DS_RECOVERING;
    while (text < end) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        const char *le = nl ? nl : end;
        if (apply(text, (size_t)(le - text), true, path, sizeof(path)))
            sd_record_be_event(&d, path);
        text = le + 1;
    }
    d.state = DS_UP;
    sd_record_scan(&d); /* main.c's periodic rescan */
    for (unsigned i = d.ndevs; i-- > 0;)
        sd_record_fe_check(&d, d.devs[i]); /* the watches of moved frontend dirs fire */
    if (d.scan_due)
        sd_record_scan(&d);
    check_records(&d);

    /* the guests' dirs did not change: every device paired in round 1 is still
     * recorded, paired, with the keys it had */
    for (unsigned i = 0; i < nwas; i++) {
        struct snap *s = &was[i];
        struct sd_dev *v = sd_record_find(&d, s->type, s->fe, s->devid);
        FZ_CHECK(v && v->paired && v->frozen);
        FZ_CHECK(v->nkv == s->nkv);
        for (unsigned k = 0; k < s->nkv; k++)
            FZ_CHECK(!strcmp(v->kv[k].k, s->kv[k].k) && !strcmp(v->kv[k].v, s->kv[k].v));
        for (unsigned k = 0; k < s->nkv; k++) {
            free(s->kv[k].k);
            free(s->kv[k].v);
        }
        free(s->kv);
    }
    free(was);

    while (d.ndevs)
        sd_record_drop(&d, d.devs[0], "done");
    free(d.devs);
    fxs_reset();
    return 0;
}
