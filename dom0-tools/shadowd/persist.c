/* persist.c - shadowd's state dir: what must survive shadowd itself.
 *
 *   <name>.devices   the recorded devices of one driver domain, its domid,
 *                    its restart times (for the budget), which of its two
 *                    names it has, its standby's domid (standby.c) and a
 *                    failed domain fenced and not yet destroyed (fence.c)
 *   <name>.recovery  the recovery in progress: phase, old and new domids
 *   history          one line per finished recovery, the newest last
 *
 * Text, one record a line, values percent-encoded (sd_text.h); written to a
 * temporary file and renamed, so a crash of shadowd leaves the old or the new
 * file. The devices and recovery files are not fsync'ed: they are written on
 * the way from a failure to the guests' reconnect, where a sync costs as much
 * as the rest of a recovery on a busy disk, and what they describe - running
 * domains - does not outlive a crash of dom0's kernel, the only thing a sync
 * protects from (a rename is atomic for every process once it returns). The
 * history, written after a recovery, is synced. Times are CLOCK_MONOTONIC and only mean something
 * within one boot: each file carries the boot id and times from another boot are dropped. A file
 * that does not parse is moved aside to <file>.bad and reported. */
#define _GNU_SOURCE
#include "persist.h"

#include "dom.h"
#include "history.h"
#include "log.h"
#include "record.h"

#include "sbuf.h"
#include "sd_text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILE       (16u << 20)
#define MAX_TOKENS     24
#define HIST_MAX_BYTES (256u << 10)

static const char *const kinds[] = {"start", "failure", "planned"};
static const char *const phases[] = {"restart", "rewire", "reconnect"};

static int mkdir_p(const char *path, mode_t mode)
{
    char buf[1024];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(buf, mode) < 0 && errno != EEXIST ? -1 : 0;
}

int sd_persist_init(struct sd *sd)
{
    if (mkdir_p(sd->conf->state_dir, 0700) < 0) {
        sd_log("state dir %s: %s", sd->conf->state_dir, strerror(errno));
        return -1;
    }
    /* Held open: files are made relative to it, so the unprivileged part
     * needs no access to the dirs above (privdrop.c gives it the dir). */
    sd->state_fd = open(sd->conf->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sd->state_fd < 0) {
        sd_log("state dir %s: %s", sd->conf->state_dir, strerror(errno));
        return -1;
    }
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (!f || !fgets(sd->boot_id, sizeof(sd->boot_id), f))
        snprintf(sd->boot_id, sizeof(sd->boot_id), "unknown");
    if (f)
        fclose(f);
    sd->boot_id[strcspn(sd->boot_id, "\n")] = 0;
    return 0;
}

static void file_path(char *buf, size_t len, const struct sd *sd, const char *name,
                      const char *suffix)
{
    snprintf(buf, len, "%s/%s%s", sd->conf->state_dir, name, suffix);
}

/* A file's name in the state dir, from its path (for messages). */
static const char *in_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int write_atomic(int dfd, const char *path, const struct sbuf *b, bool durable)
{
    char tmp[1100];
    snprintf(tmp, sizeof(tmp), "%s.tmp", in_dir(path));
    if (b->oom) {
        errno = ENOMEM;
        return -1;
    }
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < b->len) {
        ssize_t n = write(fd, b->s + off, b->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = errno;
            close(fd);
            unlinkat(dfd, tmp, 0);
            errno = e;
            return -1;
        }
        off += (size_t)n;
    }
    if ((durable && fsync(fd) < 0) || close(fd) < 0) {
        int e = errno;
        unlinkat(dfd, tmp, 0);
        errno = e;
        return -1;
    }
    if (renameat(dfd, tmp, dfd, in_dir(path)) < 0) {
        int e = errno;
        unlinkat(dfd, tmp, 0);
        errno = e;
        return -1;
    }
    if (durable)
        fsync(dfd);
    return 0;
}

/* The whole file, NUL-terminated; NULL with errno (ENOENT: none). */
static char *read_file(int dfd, const char *path)
{
    int fd = openat(dfd, in_dir(path), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size > (off_t)MAX_FILE) {
        close(fd);
        errno = EFBIG;
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t off = 0;
    while (buf && off < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    close(fd);
    if (!buf)
        return NULL;
    buf[off] = 0;
    if (strlen(buf) != off) {
        free(buf);
        errno = EINVAL;
        return NULL;
    }
    return buf;
}

static int split(char *line, char **tok)
{
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (n == MAX_TOKENS)
            return -1;
        tok[n++] = t;
    }
    return n;
}

static void set_aside(int dfd, const char *path, unsigned line, const char *why)
{
    char bad[1100];
    snprintf(bad, sizeof(bad), "%s.bad", in_dir(path));
    sd_log("state file %s:%u: %s; moved to %s.bad and ignored", path, line, why, path);
    renameat(dfd, in_dir(path), dfd, bad);
}

static bool same_boot(const struct sd *sd, const char *id)
{
    return strcmp(id, sd->boot_id) == 0 && strcmp(id, "unknown") != 0;
}

/* ---- devices ---- */

int sd_persist_save_devs(struct sd_dom *d)
{
    struct sbuf b = {0};
    char path[1024], e1[SD_MAX_VALUE * 3 + 8], e2[SD_MAX_VALUE * 3 + 8];
    sbuf_printf(&b,
                "shadowd-devices 1\nboot %s\ndomid %u\nstreak %u\nslot %u\nstandby %u\nrecid %u\n",
                d->sd->boot_id, d->srv.domid, d->srv.budget.streak, d->slot, d->sb.inst.domid,
                d->next_rec_id);
    for (unsigned i = 0; i < d->srv.budget.nrestarts; i++)
        sbuf_printf(&b, "restart %llu\n", (unsigned long long)d->srv.budget.restarts[i]);
    if (d->reap.inst.domid)
        sbuf_printf(&b, "reap %u\n", d->reap.inst.domid);
    for (unsigned i = 0; i < d->ndevs; i++) {
        const struct sd_dev *v = d->devs[i];
        if (!v->paired)
            continue;
        if (sd_pct_encode(e1, sizeof(e1), v->report) < 0)
            e1[0] = 0;
        sbuf_printf(&b, "dev %s %u %u %s %llu %s\n", v->type, v->fe, v->devid, v->fe_path,
                    (unsigned long long)v->generation, e1[0] ? e1 : "%00");
        for (unsigned k = 0; k < v->nkv; k++) {
            if (sd_pct_encode(e1, sizeof(e1), v->kv[k].k) < 0 ||
                sd_pct_encode(e2, sizeof(e2), v->kv[k].v) < 0)
                continue;
            sbuf_printf(&b, "key %s %s\n", e1, e2);
        }
    }
    sbuf_printf(&b, "end\n");
    file_path(path, sizeof(path), d->sd, d->conf->name, ".devices");
    int rc = write_atomic(d->sd->state_fd, path, &b, false);
    if (rc < 0)
        sd_dlog(d, "saving %s: %s", path, strerror(errno));
    else
        d->devs_dirty = false;
    sbuf_free(&b);
    return rc;
}

static struct sd_kv *kv_push(struct sd_dev *v, const char *k, const char *val)
{
    if (v->nkv >= SD_MAX_KEYS)
        return NULL;
    struct sd_kv *n = realloc(v->kv, (v->nkv + 1) * sizeof(*n));
    if (!n)
        return NULL;
    v->kv = n;
    n[v->nkv].k = strdup(k);
    n[v->nkv].v = strdup(val);
    if (!n[v->nkv].k || !n[v->nkv].v) {
        free(n[v->nkv].k);
        free(n[v->nkv].v);
        return NULL;
    }
    return &n[v->nkv++];
}

int sd_persist_load_devs(struct sd_dom *d)
{
    char path[1024];
    file_path(path, sizeof(path), d->sd, d->conf->name, ".devices");
    char *buf = read_file(d->sd->state_fd, path);
    if (!buf) {
        if (errno == ENOENT)
            return 0;
        sd_dlog(d, "reading %s: %s", path, strerror(errno));
        return -1;
    }
    const char *why = NULL;
    unsigned lineno = 0;
    bool boot_ok = false, ended = false;
    struct sd_dev *cur = NULL;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line && !why;
         line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        char *t[MAX_TOKENS];
        int n = split(line, t);
        uint64_t a, b2, c;
        if (n <= 0) {
            why = "malformed line";
        } else if (ended) {
            why = "text after 'end'";
        } else if (lineno == 1) {
            if (n != 2 || strcmp(t[0], "shadowd-devices") || strcmp(t[1], "1"))
                why = "not a shadowd-devices 1 file";
        } else if (!strcmp(t[0], "boot") && n == 2) {
            boot_ok = same_boot(d->sd, t[1]);
        } else if (!strcmp(t[0], "domid") && n == 2) {
            if (sd_parse_u64(t[1], 0x7FEF, &a) < 0)
                why = "bad domid";
            else
                d->srv.domid = (unsigned)a;
        } else if (!strcmp(t[0], "recid") && n == 2) {
            if (sd_parse_u64(t[1], UINT32_MAX, &a) < 0)
                why = "bad recid";
            else
                d->next_rec_id = (unsigned)a;
        } else if (!strcmp(t[0], "slot") && n == 2) {
            if (sd_parse_u64(t[1], 1, &a) < 0)
                why = "bad slot";
            else
                d->slot = (unsigned)a;
        } else if (!strcmp(t[0], "reap") && n == 2) {
            if (sd_parse_u64(t[1], 0x7FEF, &a) < 0 || !a)
                why = "bad reap domid";
            else
                d->reap.inst.domid = (unsigned)a;
        } else if (!strcmp(t[0], "standby") && n == 2) {
            if (sd_parse_u64(t[1], 0x7FEF, &a) < 0)
                why = "bad standby domid";
            else
                d->sb.inst.domid = (unsigned)a;
        } else if (!strcmp(t[0], "streak") && n == 2) {
            if (sd_parse_u64(t[1], 1000, &a) < 0)
                why = "bad streak";
            else if (boot_ok)
                d->srv.budget.streak = (unsigned)a;
        } else if (!strcmp(t[0], "restart") && n == 2) {
            if (sd_parse_u64(t[1], UINT64_MAX, &a) < 0)
                why = "bad restart time";
            else if (boot_ok && a <= sd_now() && d->srv.budget.nrestarts < SD_MAX_RESTARTS)
                d->srv.budget.restarts[d->srv.budget.nrestarts++] = a;
        } else if (!strcmp(t[0], "dev") && n == 7) {
            if (sd_parse_u64(t[2], 0x7FEF, &a) < 0 || sd_parse_u64(t[3], UINT32_MAX, &b2) < 0 ||
                sd_parse_u64(t[5], UINT64_MAX, &c) < 0 || sd_pct_decode(t[6]) < 0 ||
                strlen(t[4]) >= sizeof(cur->fe_path) || strlen(t[6]) > SD_REPORT_MAX ||
                strncmp(t[4], "/local/domain/", 14)) {
                why = "bad dev line";
            } else if (!(cur = sd_record_add(d, t[1], (unsigned)a, (unsigned)b2))) {
                why = "too many devices for max-devices";
            } else {
                snprintf(cur->fe_path, sizeof(cur->fe_path), "%s", t[4]);
                cur->generation = c;
                snprintf(cur->report, sizeof(cur->report), "%s", t[6]);
                cur->paired = cur->frozen = true;
            }
        } else if (!strcmp(t[0], "key") && n == 3) {
            if (!cur || sd_pct_decode(t[1]) < 0 || sd_pct_decode(t[2]) < 0 ||
                strlen(t[2]) > SD_MAX_VALUE || !kv_push(cur, t[1], t[2]))
                why = "bad key line";
        } else if (!strcmp(t[0], "end") && n == 1) {
            ended = true;
        } else {
            why = "unknown line";
        }
    }
    free(buf);
    if (!why && !ended)
        why = "truncated (no 'end')";
    if (why) {
        set_aside(d->sd->state_fd, path, lineno, why);
        for (unsigned i = 0; i < d->ndevs; i++)
            sd_dev_free(d->devs[i]);
        d->ndevs = 0;
        d->srv.budget.nrestarts = 0;
        return -1;
    }
    for (unsigned i = 0; i < d->ndevs; i++) { /* sort each record's keys */
        struct sd_kv *kv = d->devs[i]->kv;
        unsigned nkv = d->devs[i]->nkv;
        d->devs[i]->kv = NULL;
        d->devs[i]->nkv = 0;
        sd_dev_set_kv(d->devs[i], kv, nkv);
    }
    return 0;
}

/* ---- the recovery in progress ---- */

int sd_persist_save_rec(struct sd_dom *d)
{
    const struct sd_recovery *r = &d->rec;
    struct sbuf b = {0};
    char path[1024], e[sizeof(r->reason) * 3 + 8];
    sbuf_printf(&b, "shadowd-recovery 1\nboot %s\n", d->sd->boot_id);
    sbuf_printf(&b, "rec %u %s %s %u %u %u\n", r->id, kinds[r->kind], phases[r->phase],
                r->old_domid, r->new_domid, r->attempts);
    sbuf_printf(&b, "times %llu %llu %llu %llu\n", (unsigned long long)r->t_evidence,
                (unsigned long long)r->t_detect, (unsigned long long)r->t_restarted,
                (unsigned long long)r->t_rewired);
    if (sd_pct_encode(e, sizeof(e), r->reason) == 0)
        sbuf_printf(&b, "reason %s\n", e);
    if (r->warm)
        sbuf_printf(&b, "warm 1\n");
    for (unsigned i = 0; i < d->ndevs; i++) {
        const struct sd_dev *v = d->devs[i];
        if (v->rewired)
            sbuf_printf(&b, "base %s %u %u %llu %d %d\n", v->type, v->fe, v->devid,
                        (unsigned long long)v->rec_base, v->shadow_aware ? 1 : 0,
                        v->hot_switched ? 1 : 0);
    }
    sbuf_printf(&b, "end\n");
    file_path(path, sizeof(path), d->sd, d->conf->name, ".recovery");
    int rc = write_atomic(d->sd->state_fd, path, &b, false);
    if (rc < 0)
        sd_dlog(d, "saving %s: %s (a shadowd restart now would not resume this recovery)", path,
                strerror(errno));
    else
        d->persisted_rec = true;
    sbuf_free(&b);
    return rc;
}

static int word_index(const char *w, const char *const *list, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(w, list[i]))
            return i;
    return -1;
}

int sd_persist_load_rec(struct sd_dom *d, bool *found)
{
    char path[1024];
    *found = false;
    file_path(path, sizeof(path), d->sd, d->conf->name, ".recovery");
    char *buf = read_file(d->sd->state_fd, path);
    if (!buf) {
        if (errno == ENOENT)
            return 0;
        sd_dlog(d, "reading %s: %s", path, strerror(errno));
        return -1;
    }
    struct sd_recovery r = {0};
    const char *why = NULL;
    unsigned lineno = 0;
    bool boot_ok = false, ended = false, have_rec = false;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line && !why;
         line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        char *t[MAX_TOKENS];
        int n = split(line, t);
        uint64_t v[6];
        if (n <= 0) {
            why = "malformed line";
        } else if (ended) {
            why = "text after 'end'";
        } else if (lineno == 1) {
            if (n != 2 || strcmp(t[0], "shadowd-recovery") || strcmp(t[1], "1"))
                why = "not a shadowd-recovery 1 file";
        } else if (!strcmp(t[0], "boot") && n == 2) {
            boot_ok = same_boot(d->sd, t[1]);
        } else if (!strcmp(t[0], "rec") && n == 7) {
            int k = word_index(t[2], kinds, 3), p = word_index(t[3], phases, 3);
            if (sd_parse_u64(t[1], UINT32_MAX, &v[0]) < 0 || k < 0 || p < 0 ||
                sd_parse_u64(t[4], 0x7FEF, &v[1]) < 0 || sd_parse_u64(t[5], 0x7FEF, &v[2]) < 0 ||
                sd_parse_u64(t[6], 100000, &v[3]) < 0) {
                why = "bad rec line";
            } else {
                r.id = (unsigned)v[0];
                r.kind = (enum sd_rkind)k;
                r.phase = (enum sd_phase)p;
                r.old_domid = (unsigned)v[1];
                r.new_domid = (unsigned)v[2];
                r.attempts = (unsigned)v[3];
                have_rec = true;
            }
        } else if (!strcmp(t[0], "times") && n == 5) {
            for (int i = 0; i < 4 && !why; i++)
                if (sd_parse_u64(t[i + 1], UINT64_MAX, &v[i]) < 0)
                    why = "bad times line";
            uint64_t now = sd_now();
            if (!why && boot_ok && v[0] <= now && v[1] <= now && v[2] <= now && v[3] <= now) {
                r.t_evidence = v[0];
                r.t_detect = v[1];
                r.t_restarted = v[2];
                r.t_rewired = v[3];
            }
        } else if (!strcmp(t[0], "reason") && n == 2) {
            if (sd_pct_decode(t[1]) < 0)
                why = "bad reason";
            else
                snprintf(r.reason, sizeof(r.reason), "%s", t[1]);
        } else if (!strcmp(t[0], "warm") && n == 2 && !strcmp(t[1], "1")) {
            r.warm = true;
        } else if (!strcmp(t[0], "base") && (n == 6 || n == 7)) {
            v[4] = 0; /* the 7th, hot, is newer */
            if (sd_parse_u64(t[2], 0x7FEF, &v[0]) < 0 ||
                sd_parse_u64(t[3], UINT32_MAX, &v[1]) < 0 ||
                sd_parse_u64(t[4], UINT64_MAX, &v[2]) < 0 || sd_parse_u64(t[5], 1, &v[3]) < 0 ||
                (n == 7 && sd_parse_u64(t[6], 1, &v[4]) < 0)) {
                why = "bad base line";
            } else {
                struct sd_dev *dv = sd_record_find(d, t[1], (unsigned)v[0], (unsigned)v[1]);
                if (dv) {
                    dv->rewired = true;
                    dv->rec_base = v[2];
                    dv->shadow_aware = v[3] != 0;
                    dv->hot_switched = v[4] != 0;
                }
            }
        } else if (!strcmp(t[0], "end") && n == 1) {
            ended = true;
        } else {
            why = "unknown line";
        }
    }
    free(buf);
    if (!why && (!ended || !have_rec))
        why = "truncated";
    if (why) {
        set_aside(d->sd->state_fd, path, lineno, why);
        return -1;
    }
    uint64_t now = sd_now();
    if (!r.t_detect) { /* another boot: the clock started again */
        r.t_evidence = r.t_detect = now;
        r.t_restarted = r.phase > PH_RESTART ? now : 0;
        r.t_rewired = r.phase > PH_REWIRE ? now : 0;
    }
    d->rec = r;
    d->persisted_rec = true;
    *found = true;
    return 0;
}

void sd_persist_drop_rec(struct sd_dom *d)
{
    char path[1024];
    file_path(path, sizeof(path), d->sd, d->conf->name, ".recovery");
    if (unlinkat(d->sd->state_fd, in_dir(path), 0) < 0 && errno != ENOENT)
        sd_dlog(d, "removing %s: %s", path, strerror(errno));
    d->persisted_rec = false;
}

/* ---- history ---- */

static void hist_line(struct sbuf *b, const struct sd_hist *h)
{
    char r[sizeof(h->reason) * 3 + 8], o[sizeof(h->outcome) * 3 + 8];
    if (sd_pct_encode(r, sizeof(r), h->reason) < 0)
        snprintf(r, sizeof(r), "%%00");
    if (sd_pct_encode(o, sizeof(o), h->outcome) < 0)
        snprintf(o, sizeof(o), "%%00");
    sbuf_printf(b, "h %llu %s %u %s %d %u %u %u %u %u %llu %llu %llu %llu %llu %s %s %s %u\n",
                (unsigned long long)h->wall, h->domain, h->id, kinds[h->kind], h->ok ? 1 : 0,
                h->old_domid, h->new_domid, h->attempts, h->devices, h->reconnected,
                (unsigned long long)h->detect_ms, (unsigned long long)h->restart_ms,
                (unsigned long long)h->rewire_ms, (unsigned long long)h->reconnect_ms,
                (unsigned long long)h->total_ms, r, o, h->warm ? "warm" : "cold", h->hot);
}

void sd_persist_history_append(struct sd *sd, const struct sd_hist *h)
{
    char path[1024];
    file_path(path, sizeof(path), sd, "history", "");
    struct sbuf b = {0};
    hist_line(&b, h);
    int fd = openat(sd->state_fd, in_dir(path), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0 || b.oom || write(fd, b.s, b.len) != (ssize_t)b.len || fsync(fd) < 0)
        sd_log("appending to %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    sbuf_free(&b);
}

static int parse_hist(char *line, struct sd_hist *h)
{
    char *t[MAX_TOKENS];
    int n = split(line, t); /* 19th: warm|cold, 20th: hot devices (older lines have 18, 19) */
    uint64_t hot = 0;
    if (n < 18 || n > 20 || strcmp(t[0], "h") ||
        (n >= 19 && strcmp(t[18], "warm") && strcmp(t[18], "cold")) ||
        (n == 20 && sd_parse_u64(t[19], UINT32_MAX, &hot) < 0))
        return -1;
    uint64_t v[16];
    int k = word_index(t[4], kinds, 3);
    if (k < 0 || !sd_valid_name(t[2]) || sd_pct_decode(t[16]) < 0 || sd_pct_decode(t[17]) < 0)
        return -1;
    int num[] = {1, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    for (size_t i = 0; i < sizeof(num) / sizeof(num[0]); i++)
        if (sd_parse_u64(t[num[i]], UINT64_MAX, &v[i]) < 0)
            return -1;
    memset(h, 0, sizeof(*h));
    h->wall = v[0];
    snprintf(h->domain, sizeof(h->domain), "%s", t[2]);
    h->id = (unsigned)v[1];
    h->kind = (enum sd_rkind)k;
    h->ok = v[2] != 0;
    h->old_domid = (unsigned)v[3];
    h->new_domid = (unsigned)v[4];
    h->attempts = (unsigned)v[5];
    h->devices = (unsigned)v[6];
    h->reconnected = (unsigned)v[7];
    h->detect_ms = v[8];
    h->restart_ms = v[9];
    h->rewire_ms = v[10];
    h->reconnect_ms = v[11];
    h->total_ms = v[12];
    snprintf(h->reason, sizeof(h->reason), "%s", t[16]);
    snprintf(h->outcome, sizeof(h->outcome), "%s", t[17]);
    h->warm = n >= 19 && !strcmp(t[18], "warm");
    h->hot = (unsigned)hot;
    return 0;
}

void sd_persist_history_load(struct sd *sd)
{
    char path[1024];
    file_path(path, sizeof(path), sd, "history", "");
    char *buf = read_file(sd->state_fd, path);
    if (!buf) {
        if (errno != ENOENT)
            sd_log("reading %s: %s", path, strerror(errno));
        return;
    }
    size_t size = strlen(buf);
    unsigned bad = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        struct sd_hist h;
        if (parse_hist(line, &h) < 0) {
            bad++;
            continue;
        }
        sd_hist_add(&sd->hist, &h);
    }
    free(buf);
    if (bad)
        sd_log("%s: %u lines that do not parse were skipped", path, bad);
    if (size > HIST_MAX_BYTES) { /* keep the file to what we remember */
        struct sbuf b = {0};
        for (unsigned i = 0; i < sd->hist.n; i++)
            hist_line(&b, sd_hist_at(&sd->hist, i));
        if (write_atomic(sd->state_fd, path, &b, true) < 0)
            sd_log("rewriting %s: %s", path, strerror(errno));
        sbuf_free(&b);
    }
}
