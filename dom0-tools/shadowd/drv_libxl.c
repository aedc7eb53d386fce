/* drv_libxl.c - the libxl domain driver, for real Xen: a driver domain is
 * created from the operator's xl config file (xlcfg.c) with
 * libxl_domain_create_new in a child process (lxcreate.c: its synchronous
 * part takes seconds), destroyed with libxl_domain_destroy asynchronously
 * inside shadowd-priv's poll loop (libxl_osevent_beforepoll / _afterpoll);
 * deaths are also reported by libxl_evenable_domain_death.
 * Crash injection sends sysrq 'c' (the guest kernel panics); hang pauses.
 *
 * This driver only runs on real Xen (the system tier, a later issue); on
 * xensim it is compiled and its config checks (shadowd -n) are tested. */
#define _GNU_SOURCE
#include "drv.h"
#include "log.h"
#include "lxcreate.h"
#include "xlcfg.h"

#include <errno.h>
#include <libxl.h>
#include <libxl_utils.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <xentoollog.h>

#define MAX_OPS     16
#define MAX_WATCHES 64

/* A create (its child process) or a destroy (libxl's ao) in flight. A
 * create's op lives on after its done() until the child is reaped. */
struct op {
    bool used, done;
    enum sd_drv_op kind;
    void *arg;
    uint32_t domid;
    int rc;
    struct sd_lxc lxc; /* a create's child */
};

struct watch {
    uint32_t domid;
    libxl_evgen_domain_death *ev;
};

struct sd_drv {
    libxl_ctx *ctx;
    xentoollog_logger_stdiostream *log;
    struct sd_drv_hooks hooks;
    struct op ops[MAX_OPS];
    int nchild_fds; /* how many of the fds lx_prepoll gave are children's pipes (first) */
    struct watch watches[MAX_WATCHES];
    unsigned nwatches;
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

static int lx_check(const struct sd_domconf *d, FILE *err)
{
    libxl_domain_config cfg;
    if (sd_xlcfg_load(NULL, d->xl_config, d->name, err, &cfg) < 0) {
        fprintf(err, "%s:%u: domain '%s': xl-config %s is not usable\n", d->file, d->line, d->name,
                d->xl_config);
        return -1;
    }
    libxl_domain_config_dispose(&cfg);
    return 0;
}

static struct sd_drv *lx_open(const struct sd_conf *c, const struct sd_drv_hooks *h, char *err,
                              size_t len)
{
    (void)c;
    struct sd_drv *drv = calloc(1, sizeof(*drv));
    if (!drv) {
        seterr(err, len, "libxl driver: out of memory");
        return NULL;
    }
    drv->hooks = *h;
    drv->log = xtl_createlogger_stdiostream(stderr, XTL_WARN, 0);
    if (!drv->log ||
        libxl_ctx_alloc(&drv->ctx, LIBXL_VERSION, 0, (xentoollog_logger *)drv->log) != 0) {
        seterr(err, len, "libxl_ctx_alloc failed (is this dom0 of a running Xen, as root?)");
        if (drv->log)
            xtl_logger_destroy((xentoollog_logger *)drv->log);
        free(drv);
        return NULL;
    }
    /* The creates' children are ours to reap (lxcreate.h); libxl reaps
     * only its own (hotplug scripts), whatever else runs. */
    static const libxl_childproc_hooks chld = {.chldowner =
                                                   libxl_sigchld_owner_libxl_always_selective_reap};
    libxl_childproc_setmode(drv->ctx, &chld, NULL);
    return drv;
}

static void lx_close(struct sd_drv *drv)
{
    if (!drv)
        return;
    for (unsigned i = 0; i < drv->nwatches; i++)
        libxl_evdisable_domain_death(drv->ctx, drv->watches[i].ev);
    libxl_ctx_free(drv->ctx); /* outstanding operations are abandoned */
    for (int i = 0; i < MAX_OPS; i++)
        if (drv->ops[i].used && drv->ops[i].kind == SD_OP_CREATE)
            sd_lxc_abandon(&drv->ops[i].lxc);
    xtl_logger_destroy((xentoollog_logger *)drv->log);
    free(drv);
}

static int lx_find(struct sd_drv *drv, const char *name, unsigned *domid, char *err, size_t len)
{
    uint32_t id;
    if (libxl_name_to_domid(drv->ctx, name, &id) != 0) {
        seterr(err, len, "no domain called %s", name);
        errno = ENOENT;
        return -1;
    }
    *domid = id;
    return 0;
}

static void from_dominfo(struct sd_domstat *st, const libxl_dominfo *info)
{
    if (info->dying)
        st->run = SD_RUN_DYING;
    else if (info->shutdown)
        st->run = SD_RUN_SHUTDOWN;
    else if (info->paused)
        st->run = SD_RUN_PAUSED;
    else
        st->run = SD_RUN_RUNNING;
    if (info->shutdown || info->dying)
        st->reason = (int)info->shutdown_reason; /* LIBXL_SHUTDOWN_REASON_* = SHUTDOWN_* */
}

static int lx_info(struct sd_drv *drv, unsigned domid, struct sd_domstat *st, char *err, size_t len)
{
    memset(st, 0, sizeof(*st));
    st->reason = -1;
    libxl_dominfo info;
    libxl_dominfo_init(&info);
    int rc = libxl_domain_info(drv->ctx, &info, domid);
    if (rc == ERROR_DOMAIN_NOTFOUND) {
        st->run = SD_RUN_GONE;
        libxl_dominfo_dispose(&info);
        return 0;
    }
    if (rc) {
        seterr(err, len, "libxl_domain_info %u: error %d", domid, rc);
        libxl_dominfo_dispose(&info);
        return -1;
    }
    from_dominfo(st, &info);
    char *name = libxl_domid_to_name(drv->ctx, domid);
    if (name)
        snprintf(st->name, sizeof(st->name), "%s", name);
    free(name);
    libxl_dominfo_dispose(&info);
    return 0;
}

/* One hypercall for every domain, and no xenstore read for names (2-60 ms
 * apiece right after a crash, measured on Xen 4.17 in QEMU). */
static int lx_look(struct sd_drv *drv, const unsigned *domids, unsigned n, struct sd_domstat *st,
                   char *err, size_t len)
{
    int nb = 0;
    libxl_dominfo *all = libxl_list_domain(drv->ctx, &nb);
    if (!all) {
        seterr(err, len, "libxl_list_domain failed");
        return -1;
    }
    for (unsigned i = 0; i < n; i++) {
        memset(&st[i], 0, sizeof(st[i]));
        st[i].reason = -1;
        st[i].run = SD_RUN_GONE;
        for (int j = 0; j < nb; j++) {
            if (all[j].domid == domids[i]) {
                from_dominfo(&st[i], &all[j]);
                break;
            }
        }
    }
    libxl_dominfo_list_free(all, nb);
    return 0;
}

static void op_done(libxl_ctx *ctx, int rc, void *p)
{
    (void)ctx;
    struct op *o = p;
    o->rc = rc;
    o->done = true; /* delivered from postpoll, outside libxl */
}

static struct op *op_new(struct sd_drv *drv, enum sd_drv_op kind, void *arg)
{
    for (int i = 0; i < MAX_OPS; i++) {
        struct op *o = &drv->ops[i];
        if (!o->used) {
            memset(o, 0, sizeof(*o));
            o->used = true;
            o->kind = kind;
            o->arg = arg;
            return o;
        }
    }
    return NULL;
}

static void op_free(struct op *o)
{
    o->used = false;
}

static int lx_create(struct sd_drv *drv, const struct sd_domconf *d, const char *name, bool boost,
                     void *arg, unsigned *domid, char *err, size_t len)
{
    (void)domid;
    struct op *o = op_new(drv, SD_OP_CREATE, arg);
    if (!o) {
        seterr(err, len, "too many libxl operations in flight");
        return -1;
    }
    if (sd_lxc_start(drv->ctx, d, name, boost, &o->lxc, err, len) < 0) {
        op_free(o);
        return -1;
    }
    return SD_DRV_PENDING;
}

static int lx_destroy(struct sd_drv *drv, unsigned domid, void *arg, char *err, size_t len)
{
    struct op *o = op_new(drv, SD_OP_DESTROY, arg);
    if (!o) {
        seterr(err, len, "too many libxl operations in flight");
        return -1;
    }
    o->domid = domid;
    libxl_asyncop_how how = {.callback = op_done, .u.for_callback = o};
    int rc = libxl_domain_destroy(drv->ctx, domid, &how);
    if (rc) {
        seterr(err, len, "libxl_domain_destroy %u: error %d", domid, rc);
        op_free(o);
        return -1;
    }
    return SD_DRV_PENDING;
}

static int lx_pause(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    int rc = libxl_domain_pause(drv->ctx, domid, NULL);
    if (rc)
        seterr(err, len, "libxl_domain_pause %u: error %d", domid, rc);
    return rc ? -1 : 0;
}

static int lx_unpause(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    int rc = libxl_domain_unpause(drv->ctx, domid, NULL);
    if (rc)
        seterr(err, len, "libxl_domain_unpause %u: error %d", domid, rc);
    return rc ? -1 : 0;
}

static int lx_crash(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    int rc = libxl_send_sysrq(drv->ctx, domid, 'c');
    if (rc)
        seterr(err, len, "libxl_send_sysrq %u c: error %d", domid, rc);
    return rc ? -1 : 0;
}

/* The weight xl would give the domain: its config's cpu_weight, or 256,
 * the default of Xen's credit and credit2 schedulers. */
static int lx_settle(struct sd_drv *drv, const struct sd_domconf *d, unsigned domid, char *err,
                     size_t len)
{
    libxl_domain_config cfg;
    libxl_domain_config_init(&cfg);
    if (sd_xlcfg_load(drv->ctx, d->xl_config, d->name, stderr, &cfg) < 0) {
        libxl_domain_config_dispose(&cfg);
        seterr(err, len, "xl config %s does not load (see above)", d->xl_config);
        return -1;
    }
    int w = cfg.b_info.sched_params.weight;
    libxl_domain_config_dispose(&cfg);
    if (w == LIBXL_DOMAIN_SCHED_PARAM_WEIGHT_DEFAULT)
        w = 256;
    libxl_domain_sched_params p;
    libxl_domain_sched_params_init(&p); /* every other field: left as it is */
    p.weight = w;
    int rc = libxl_domain_sched_params_set(drv->ctx, domid, &p);
    libxl_domain_sched_params_dispose(&p);
    if (rc) {
        seterr(err, len, "libxl_domain_sched_params_set %u weight %d: error %d", domid, w, rc);
        return -1;
    }
    return 0;
}

static int lx_watch(struct sd_drv *drv, unsigned domid)
{
    if (drv->nwatches == MAX_WATCHES)
        return -1;
    struct watch *w = &drv->watches[drv->nwatches];
    if (libxl_evenable_domain_death(drv->ctx, domid, 0, &w->ev))
        return -1;
    w->domid = domid;
    drv->nwatches++;
    return 0;
}

static void lx_unwatch(struct sd_drv *drv, unsigned domid)
{
    for (unsigned i = 0; i < drv->nwatches; i++) {
        if (drv->watches[i].domid != domid)
            continue;
        libxl_evdisable_domain_death(drv->ctx, drv->watches[i].ev);
        drv->watches[i] = drv->watches[--drv->nwatches];
        return;
    }
}

static int lx_prepoll(struct sd_drv *drv, struct pollfd *fds, int max, int *timeout_ms)
{
    uint64_t now_ms = sd_now();
    int nchild = 0;
    for (int i = 0; i < MAX_OPS; i++) {
        struct op *o = &drv->ops[i];
        if (!o->used || o->kind != SD_OP_CREATE)
            continue;
        int t = sd_lxc_timeout(&o->lxc, now_ms);
        if (t >= 0 && (*timeout_ms < 0 || t < *timeout_ms))
            *timeout_ms = t;
        if (o->lxc.fd >= 0 && nchild < max)
            fds[nchild++] = (struct pollfd){.fd = o->lxc.fd, .events = POLLIN};
    }
    struct timeval now;
    gettimeofday(&now, NULL); /* libxl's own timeouts are on the wall clock */
    int n = max - nchild;
    if (libxl_osevent_beforepoll(drv->ctx, &n, fds + nchild, timeout_ms, now) != 0) {
        fprintf(stderr, "shadowd: libxl wants %d fds, more than %d: its events are delayed\n", n,
                max - nchild);
        *timeout_ms = 100;
        n = 0;
    }
    drv->nchild_fds = nchild;
    return nchild + n;
}

/* A create's child: its result reported once, the op freed once it is reaped. */
static void child_poll(struct sd_drv *drv, struct op *o)
{
    struct sd_lxc_result res;
    int got = sd_lxc_poll(&o->lxc, &res, sd_now());
    void *arg = o->arg;
    if (got & SD_LXC_OVER)
        op_free(o);
    if (got & SD_LXC_RESULT)
        drv->hooks.done(drv->hooks.ctx, arg, SD_OP_CREATE, res.rc ? -1 : 0, res.rc ? 0 : res.domid,
                        res.err);
}

static void lx_postpoll(struct sd_drv *drv, struct pollfd *fds, int n)
{
    /* The children's pipes come first (lx_prepoll); reading them never
     * blocks, so every create is looked at, woken or not. */
    int nchild = drv->nchild_fds < n ? drv->nchild_fds : n;
    struct timeval now;
    gettimeofday(&now, NULL);
    libxl_osevent_afterpoll(drv->ctx, n - nchild, fds + nchild, now);
    libxl_event *ev;
    while (libxl_event_check(drv->ctx, &ev, LIBXL_EVENTMASK_ALL, NULL, NULL) == 0) {
        if (ev->type == LIBXL_EVENT_TYPE_DOMAIN_SHUTDOWN ||
            ev->type == LIBXL_EVENT_TYPE_DOMAIN_DEATH)
            drv->hooks.changed(drv->hooks.ctx, ev->domid);
        libxl_event_free(drv->ctx, ev);
    }
    for (int i = 0; i < MAX_OPS; i++) {
        struct op *o = &drv->ops[i];
        if (o->used && o->kind == SD_OP_CREATE) {
            child_poll(drv, o);
            continue;
        }
        if (!o->used || !o->done)
            continue;
        char err[96] = "";
        void *arg = o->arg;
        unsigned domid = o->domid;
        int rc = o->rc ? -1 : 0;
        /* Someone else's destroy of the same domain (`xl destroy`, which a
         * recovery can begin during: detect.c, teardown) may have made ours
         * fail: a domain that is dying or gone is destroyed all the same. */
        struct sd_domstat st;
        char ierr[96];
        if (rc && lx_info(drv, domid, &st, ierr, sizeof(ierr)) == 0 &&
            (st.run == SD_RUN_GONE || st.run == SD_RUN_DYING))
            rc = 0;
        else if (rc)
            snprintf(err, sizeof(err), "libxl error %d", o->rc);
        op_free(o);
        drv->hooks.done(drv->hooks.ctx, arg, SD_OP_DESTROY, rc, domid, err);
    }
}

const struct sd_drv_ops sd_drv_libxl = {
    .name = "libxl",
    .check = lx_check,
    .open = lx_open,
    .close = lx_close,
    .find = lx_find,
    .info = lx_info,
    .look = lx_look,
    .create = lx_create,
    .destroy = lx_destroy,
    .pause = lx_pause,
    .crash = lx_crash,
    .unpause = lx_unpause,
    .settle = lx_settle,
    .watch = lx_watch,
    .unwatch = lx_unwatch,
    .prepoll = lx_prepoll,
    .postpoll = lx_postpoll,
};
