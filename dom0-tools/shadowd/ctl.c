/* ctl.c - the commands of the control socket, one request line each:
 *
 *   status [json] | history [json] | metrics | ping
 *   restart DOMAIN                 a planned restart
 *   inject DOMAIN FAULT [COUNT]    crash, hang (the domain), or corrupt, slow,
 *                                  backend-hang, backend-crash (the backends,
 *                                  through USK_DRV_INJECT)
 *
 * The reply is "ok\n" and a body, or "error: <message>\n". The socket is
 * dom0 root's only (mode 0600): these are privileged operations. */
#define _GNU_SOURCE
#include "ctl.h"

#include "dom.h"
#include "log.h"
#include "metrics.h"
#include "recover.h"
#include "status.h"

#include "sbuf.h"
#include "sd_text.h"
#include "understudy-keys.h"
#include "xs_txn.h"
#include "xs_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS 8

static struct sd_dom *dom_named(struct sd *sd, const char *name)
{
    for (unsigned i = 0; i < sd->ndoms; i++)
        if (!strcmp(sd->doms[i].conf->name, name))
            return &sd->doms[i];
    return NULL;
}

static int err(struct sbuf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int err(struct sbuf *out, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sbuf_reset(out);
    sbuf_printf(out, "error: %s\n", msg);
    return -1;
}

struct inject_write {
    const char *path, *val;
    struct xs_permissions perms[2];
};

static int inject_body(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    struct inject_write *w = arg;
    if (!xs_write(xs, t, w->path, w->val, (unsigned)strlen(w->val)) ||
        !xs_set_permissions(xs, t, w->path, w->perms, 2))
        return -1;
    return 0;
}

/* Write "<seq> <fault> [<count>]" to the domain's inject key, perms n0,r<drv>. */
static int write_inject(struct sd *sd, struct sd_dom *d, const char *fault, const char *count,
                        struct sbuf *out)
{
    char dir[64], path[128];
    snprintf(dir, sizeof(dir), "/local/domain/%u", d->srv.domid);
    snprintf(path, sizeof(path), "%s/%s", dir, USK_DRV_INJECT);
    uint64_t seq = 0, c = 0;
    bool has = false;
    char f[16];
    const char *why;
    char *old = xsu_read(sd->xs, XBT_NULL, dir, USK_DRV_INJECT, 128);
    if (old && sd_parse_inject(old, &seq, f, sizeof(f), &c, &has, &why) < 0)
        seq = 0;
    free(old);
    char val[96];
    snprintf(val, sizeof(val), "%llu %s%s%s", (unsigned long long)seq + 1, fault, count ? " " : "",
             count ? count : "");
    struct inject_write w = {
        .path = path,
        .val = val,
        .perms = {{.id = 0, .perms = XS_PERM_NONE}, {.id = d->srv.domid, .perms = XS_PERM_READ}}};
    if (xsu_txn(sd->xs, inject_body, &w, NULL) < 0)
        return err(out, "writing %s: %s", path, strerror(errno));
    sd_dlog(d, "inject: wrote '%s' to %s", val, path);
    sbuf_printf(out, "ok\nwrote '%s' to %s\n", val, path);
    return 0;
}

static int inject(struct sd *sd, struct sd_dom *d, char **w, int n, struct sbuf *out)
{
    const char *fault = w[2], *count = n > 3 ? w[3] : NULL;
    struct sd_drv *drv = sd->drv[d->conf->driver];
    char e[256];
    uint64_t c;
    if (count && sd_parse_u64(count, 1000000000, &c) < 0)
        return err(out, "COUNT '%s' is not a whole number", count);
    if (!d->srv.domid || d->state == DS_FAILED)
        return err(out, "domain %s has no running domain to inject into", d->conf->name);
    if (!strcmp(fault, "crash") || !strcmp(fault, "hang")) {
        if (count)
            return err(out, "%s takes no COUNT", fault);
        bool crash = !strcmp(fault, "crash");
        if ((crash ? d->ops->crash : d->ops->pause)(drv, d->srv.domid, e, sizeof(e)) < 0)
            return err(out, "%s", e);
        sd_dlog(d, "inject: %s domain %u", crash ? "crashed" : "paused", d->srv.domid);
        sbuf_printf(out, "ok\n%s domain %u\n", crash ? "crashed" : "paused", d->srv.domid);
        return 0;
    }
    if (!strcmp(fault, "corrupt") || !strcmp(fault, "slow"))
        return write_inject(sd, d, fault, count, out);
    if (!strcmp(fault, "backend-hang") || !strcmp(fault, "backend-crash")) {
        if (count)
            return err(out, "%s takes no COUNT", fault);
        return write_inject(sd, d, fault + 8, NULL, out);
    }
    return err(out,
               "unknown fault '%s' (crash, hang, corrupt [N], slow [MS], backend-hang, "
               "backend-crash)",
               fault);
}

int sd_ctl_command(struct sd *sd, const char *line, struct sbuf *out)
{
    char buf[512], *w[MAX_WORDS];
    int n = 0;
    if (strlen(line) >= sizeof(buf))
        return err(out, "request too long");
    snprintf(buf, sizeof(buf), "%s", line);
    char *save = NULL;
    for (char *t = strtok_r(buf, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == MAX_WORDS)
            return err(out, "too many words");
        w[n++] = t;
    }
    if (n == 0)
        return err(out, "empty request");
    bool json = n == 2 && !strcmp(w[1], "json");
    if (!strcmp(w[0], "ping") && n == 1) {
        sbuf_printf(out, "ok\npong\n");
        return 0;
    }
    if (!strcmp(w[0], "status") && (n == 1 || json)) {
        sbuf_printf(out, "ok\n");
        (json ? sd_status_json : sd_status_text)(sd, out);
        return 0;
    }
    if (!strcmp(w[0], "history") && (n == 1 || json)) {
        sbuf_printf(out, "ok\n");
        sd_history_text(sd, out, json);
        return 0;
    }
    if (!strcmp(w[0], "metrics") && n == 1) {
        sbuf_printf(out, "ok\n");
        sd_metrics(sd, out);
        return 0;
    }
    if (!strcmp(w[0], "restart") || !strcmp(w[0], "inject")) {
        bool restart = !strcmp(w[0], "restart");
        if ((restart && n != 2) || (!restart && (n < 3 || n > 4)))
            return err(out, restart ? "usage: restart DOMAIN" : "usage: inject DOMAIN FAULT [N]");
        struct sd_dom *d = dom_named(sd, w[1]);
        if (!d)
            return err(out, "no driver domain '%s' in %s", w[1], sd->conf->path);
        if (!restart)
            return inject(sd, d, w, n, out);
        if (d->state == DS_RECOVERING)
            return err(out, "%s is already recovering (recovery %u, phase %s)", d->conf->name,
                       d->rec.id, sd_phase_name(d->rec.phase));
        if (d->startup_pending)
            return err(out, "%s: shadowd has not reached its driver yet", d->conf->name);
        sd_recover_start(d, RK_PLANNED, SRC_PLANNED, 0, "planned restart (shadowctl restart)");
        sbuf_printf(out, "ok\nrestarting %s (recovery %u)\n", d->conf->name, d->rec.id);
        return 0;
    }
    return err(out, "unknown request '%s' (status, history, metrics, restart, inject, ping)", w[0]);
}
