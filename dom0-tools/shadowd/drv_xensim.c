/* drv_xensim.c - the xensim domain driver: domains are created, destroyed,
 * paused and crashed through the simulator's control socket
 * (<xensim-dir>/ctl.sock, xensim/client/xsim_ctl.h), the sim's equivalent of
 * the domctls libxl makes. Every operation completes at once. */
#define _GNU_SOURCE
#include "drv.h"

#include "xsim_ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

struct sd_drv {
    char dir[1024];
    struct xsim_ctl *ctl;
};

static void seterr(char *err, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

static int xs_check(const struct sd_domconf *d, FILE *err)
{
    (void)d;
    (void)err;
    return 0; /* conf.c checked the command; the sim is only reached at run time */
}

/* (Re)connect to xensimd. 0 or -1 with a message. */
static int ensure(struct sd_drv *drv, char *err, size_t len)
{
    if (drv->ctl)
        return 0;
    drv->ctl = xsim_ctl_open(drv->dir);
    if (!drv->ctl) {
        seterr(err, len, "connect to xensimd at %s/ctl.sock: %s", drv->dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* After a failed call: a broken connection is dropped so the next call reconnects. */
static void after_error(struct sd_drv *drv)
{
    if (errno == ECONNRESET || errno == EPIPE || errno == ENOTCONN || errno == EPROTO) {
        xsim_ctl_close(drv->ctl);
        drv->ctl = NULL;
    }
}

static struct sd_drv *xs_open_drv(const struct sd_conf *c, const struct sd_drv_hooks *h, char *err,
                                  size_t len)
{
    (void)h;
    const char *dir = c->xensim_dir ? c->xensim_dir : getenv("XENSIM_DIR");
    if (!dir || !*dir) {
        seterr(err, len, "xensim driver: no xensim-dir in %s and no $XENSIM_DIR", c->path);
        return NULL;
    }
    struct sd_drv *drv = calloc(1, sizeof(*drv));
    if (!drv) {
        seterr(err, len, "xensim driver: out of memory");
        return NULL;
    }
    if (snprintf(drv->dir, sizeof(drv->dir), "%s", dir) >= (int)sizeof(drv->dir)) {
        seterr(err, len, "xensim driver: directory name too long");
        free(drv);
        return NULL;
    }
    if (ensure(drv, err, len) < 0) {
        free(drv);
        return NULL;
    }
    return drv;
}

static void xs_close_drv(struct sd_drv *drv)
{
    if (!drv)
        return;
    xsim_ctl_close(drv->ctl);
    free(drv);
}

static int xs_find(struct sd_drv *drv, const char *name, unsigned *domid, char *err, size_t len)
{
    if (ensure(drv, err, len) < 0)
        return -1;
    struct ctl_dominfo *v = NULL;
    unsigned n = 0;
    if (xsim_ctl_list(drv->ctl, &v, &n) < 0) {
        int e = errno;
        seterr(err, len, "xensim list: %s", xsim_ctl_error(drv->ctl));
        after_error(drv);
        errno = e == ENOENT ? EIO : e;
        return -1;
    }
    int rc = -1;
    for (unsigned i = 0; i < n; i++) {
        if (v[i].domid != 0 && !strncmp(v[i].name, name, sizeof(v[i].name))) {
            *domid = v[i].domid;
            rc = 0;
            break;
        }
    }
    free(v);
    if (rc < 0)
        errno = ENOENT;
    return rc;
}

static void from_ctl(struct sd_domstat *st, const struct ctl_dominfo *d)
{
    switch (d->state) {
    case DOM_RUNNING:
        st->run = SD_RUN_RUNNING;
        break;
    case DOM_PAUSED:
        st->run = SD_RUN_PAUSED;
        break;
    case DOM_SHUTDOWN:
        st->run = SD_RUN_SHUTDOWN;
        break;
    default:
        st->run = SD_RUN_DYING;
        break;
    }
    st->reason = d->shutdown_reason;
    st->shutdown_ms = d->shutdown_ms;
}

static int xs_info(struct sd_drv *drv, unsigned domid, struct sd_domstat *st, char *err, size_t len)
{
    memset(st, 0, sizeof(*st));
    st->reason = -1;
    if (ensure(drv, err, len) < 0)
        return -1;
    struct ctl_dominfo d;
    if (xsim_ctl_info(drv->ctl, domid, &d) < 0) {
        if (errno == ESRCH) {
            st->run = SD_RUN_GONE;
            return 0;
        }
        seterr(err, len, "xensim info %u: %s", domid, xsim_ctl_error(drv->ctl));
        after_error(drv);
        return -1;
    }
    from_ctl(st, &d);
    snprintf(st->name, sizeof(st->name), "%.*s", (int)sizeof(d.name), d.name);
    return 0;
}

static int xs_look(struct sd_drv *drv, const unsigned *domids, unsigned n, struct sd_domstat *st,
                   char *err, size_t len)
{
    if (ensure(drv, err, len) < 0)
        return -1;
    struct ctl_dominfo *v = NULL;
    unsigned nv = 0;
    if (xsim_ctl_list(drv->ctl, &v, &nv) < 0) {
        seterr(err, len, "xensim list: %s", xsim_ctl_error(drv->ctl));
        after_error(drv);
        return -1;
    }
    for (unsigned i = 0; i < n; i++) {
        memset(&st[i], 0, sizeof(st[i]));
        st[i].reason = -1;
        st[i].run = SD_RUN_GONE;
        bool found = false;
        for (unsigned j = 0; j < nv && !found; j++) {
            if (v[j].domid == domids[i]) {
                from_ctl(&st[i], &v[j]);
                found = true;
            }
        }
        /* The list is cut at one message's worth: a domain not in it is
         * asked after alone (rare: gone is what a failure looks like). */
        if (!found && xs_info(drv, domids[i], &st[i], err, len) < 0) {
            free(v);
            return -1;
        }
    }
    free(v);
    return 0;
}

/* The domain's environment: ours, with the configured K=V overriding. */
static char **make_env(const struct sd_domconf *d)
{
    size_t ne = 0;
    while (environ[ne])
        ne++;
    char **env = calloc(ne + d->envc + 1, sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t j = 0; j < ne; j++) {
        bool overridden = false;
        for (unsigned x = 0; x < d->envc; x++) {
            size_t kl = (size_t)(strchr(d->env[x], '=') - d->env[x]) + 1;
            if (!strncmp(environ[j], d->env[x], kl))
                overridden = true;
        }
        if (!overridden)
            env[k++] = environ[j];
    }
    for (unsigned x = 0; x < d->envc; x++)
        env[k++] = d->env[x];
    return env;
}

static int xs_create(struct sd_drv *drv, const struct sd_domconf *d, const char *name, bool boost,
                     void *arg, unsigned *domid, char *err, size_t len)
{
    (void)arg;
    (void)boost; /* no boot-weight: the simulator has no scheduler */
    if (ensure(drv, err, len) < 0)
        return -1;
    int nfd = open("/dev/null", O_RDONLY | O_CLOEXEC), lfd = -1;
    if (nfd < 0) {
        seterr(err, len, "open /dev/null: %s", strerror(errno));
        return -1;
    }
    if (d->log) {
        lfd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
        if (lfd < 0) {
            seterr(err, len, "open log %s: %s", d->log, strerror(errno));
            close(nfd);
            return -1;
        }
    }
    char **env = make_env(d);
    if (!env) {
        seterr(err, len, "out of memory");
        if (lfd >= 0)
            close(lfd);
        close(nfd);
        return -1;
    }
    int fds[3] = {nfd, lfd >= 0 ? lfd : 1, lfd >= 0 ? lfd : 2};
    struct ctl_dominfo info;
    int rc = xsim_ctl_create(drv->ctl, name, d->argv, env, "/", fds, &info);
    if (rc < 0) {
        seterr(err, len, "xensim create %s: %s", name, xsim_ctl_error(drv->ctl));
        after_error(drv);
    } else {
        *domid = info.domid;
    }
    free(env);
    if (lfd >= 0)
        close(lfd);
    close(nfd);
    return rc < 0 ? -1 : SD_DRV_DONE;
}

static int xs_destroy(struct sd_drv *drv, unsigned domid, void *arg, char *err, size_t len)
{
    (void)arg;
    if (ensure(drv, err, len) < 0)
        return -1;
    if (xsim_ctl_destroy(drv->ctl, domid) < 0 && errno != ESRCH) {
        seterr(err, len, "xensim destroy %u: %s", domid, xsim_ctl_error(drv->ctl));
        after_error(drv);
        return -1;
    }
    return SD_DRV_DONE;
}

/* A control-socket request about domid (what: its name, for the message). */
static int xs_act(struct sd_drv *drv, unsigned domid, int (*op)(struct xsim_ctl *, unsigned),
                  const char *what, char *err, size_t len)
{
    if (ensure(drv, err, len) < 0)
        return -1;
    if (op(drv->ctl, domid) < 0) {
        seterr(err, len, "xensim %s %u: %s", what, domid, xsim_ctl_error(drv->ctl));
        after_error(drv);
        return -1;
    }
    return 0;
}

static int xs_pause(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    return xs_act(drv, domid, xsim_ctl_pause, "pause", err, len);
}

static int xs_unpause(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    return xs_act(drv, domid, xsim_ctl_unpause, "unpause", err, len);
}

static int xs_crash(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    if (ensure(drv, err, len) < 0)
        return -1;
    if (xsim_ctl_shutdown(drv->ctl, domid, DOM_SHUTDOWN_CRASH) < 0) {
        seterr(err, len, "xensim shutdown %u crash: %s", domid, xsim_ctl_error(drv->ctl));
        after_error(drv);
        return -1;
    }
    return 0;
}

const struct sd_drv_ops sd_drv_xensim = {
    .name = "xensim",
    .check = xs_check,
    .open = xs_open_drv,
    .close = xs_close_drv,
    .find = xs_find,
    .info = xs_info,
    .look = xs_look,
    .create = xs_create,
    .destroy = xs_destroy,
    .pause = xs_pause,
    .crash = xs_crash,
    .unpause = xs_unpause,
};

const struct sd_drv_ops *sd_drv_ops_for(enum sd_driver_kind k)
{
    switch (k) {
    case SD_DRIVER_XENSIM:
        return &sd_drv_xensim;
    case SD_DRIVER_LIBXL:
        return &sd_drv_libxl;
    case SD_DRIVER_LIBVIRT:
        return &sd_drv_libvirt;
    default:
        return NULL;
    }
}
