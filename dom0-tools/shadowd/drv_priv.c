/* drv_priv.c - the domain driver shadowd itself uses: every operation is a
 * request to shadowd-priv (privchan.h), which holds the real driver of the
 * kind (drv_xensim.c, drv_libxl.c, drv_libvirt.c) and checks it. One
 * instance per driver kind used, over one channel; completions and death
 * events arrive through the channel's postpoll, as drv.h asks. */
#define _GNU_SOURCE
#include "drv_priv.h"

#include "privchan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sd_drv {
    struct sd_privchan *ch;
    enum sd_driver_kind kind;
};

struct sd_drv *sd_drv_priv_new(struct sd_privchan *ch, enum sd_driver_kind k)
{
    struct sd_drv *drv = calloc(1, sizeof(*drv));
    if (drv) {
        drv->ch = ch;
        drv->kind = k;
    }
    return drv;
}

static void pv_close(struct sd_drv *drv)
{
    free(drv);
}

/* One request: its reply's rc (errno and err set when it is -1). */
static int call(struct sd_drv *drv, struct sd_privmsg *req, struct sd_privmsg *rep, void *arg,
                char *err, size_t len)
{
    req->kind = drv->kind;
    if (sd_privchan_call(drv->ch, req, rep, arg, err, len) < 0) {
        errno = EIO;
        return -1;
    }
    if (rep->rc < 0) {
        snprintf(err, len, "%s", rep->err);
        errno = rep->err_no ? rep->err_no : EIO;
    }
    return rep->rc;
}

static int pv_find(struct sd_drv *drv, const char *name, unsigned *domid, char *err, size_t len)
{
    struct sd_privmsg req = {.type = SD_PRIV_FIND}, rep;
    if (snprintf(req.name, sizeof(req.name), "%s", name) >= (int)sizeof(req.name)) {
        snprintf(err, len, "domain name %s is too long", name);
        errno = EINVAL;
        return -1;
    }
    if (call(drv, &req, &rep, NULL, err, len) < 0)
        return -1;
    *domid = rep.domid;
    return 0;
}

static int pv_info(struct sd_drv *drv, unsigned domid, struct sd_domstat *st, char *err, size_t len)
{
    struct sd_privmsg req = {.type = SD_PRIV_INFO, .domid = domid}, rep;
    memset(st, 0, sizeof(*st));
    st->reason = -1;
    if (call(drv, &req, &rep, NULL, err, len) < 0)
        return -1;
    st->run = (enum sd_run)rep.st.run;
    st->reason = rep.st.reason;
    st->shutdown_ms = rep.st.shutdown_ms;
    snprintf(st->name, sizeof(st->name), "%s", rep.st.name);
    return 0;
}

/* In requests of up to SD_PRIV_LOOKMAX domains each. */
static int pv_look(struct sd_drv *drv, const unsigned *domids, unsigned n, struct sd_domstat *st,
                   char *err, size_t len)
{
    for (unsigned at = 0; at < n; at += SD_PRIV_LOOKMAX) {
        unsigned k = n - at < SD_PRIV_LOOKMAX ? n - at : SD_PRIV_LOOKMAX;
        struct sd_privmsg req = {.type = SD_PRIV_LOOK, .nlook = k}, rep;
        for (unsigned i = 0; i < k; i++)
            req.look[i].domid = domids[at + i];
        if (call(drv, &req, &rep, NULL, err, len) < 0)
            return -1;
        for (unsigned i = 0; i < k; i++) {
            struct sd_domstat *s = &st[at + i];
            memset(s, 0, sizeof(*s));
            s->reason = -1;
            if (rep.nlook != k || rep.look[i].domid != domids[at + i]) {
                snprintf(err, len, "shadowd-priv answered a look at %u domains with %u", k,
                         rep.nlook);
                errno = EIO;
                return -1;
            }
            s->run = (enum sd_run)rep.look[i].run;
            s->reason = rep.look[i].reason;
            s->shutdown_ms = rep.look[i].shutdown_ms;
        }
    }
    return 0;
}

static int pv_create(struct sd_drv *drv, const struct sd_domconf *d, const char *name, bool boost,
                     void *arg, unsigned *domid, char *err, size_t len)
{
    struct sd_privmsg req = {.type = SD_PRIV_CREATE, .flags = boost ? SD_PRIV_F_BOOST : 0}, rep;
    snprintf(req.dom, sizeof(req.dom), "%s", d->name);
    if (snprintf(req.name, sizeof(req.name), "%s", name) >= (int)sizeof(req.name)) {
        snprintf(err, len, "domain name %s is too long", name);
        return -1;
    }
    int rc = call(drv, &req, &rep, arg, err, len);
    if (rc == SD_DRV_DONE)
        *domid = rep.domid;
    return rc;
}

static int pv_destroy(struct sd_drv *drv, unsigned domid, void *arg, char *err, size_t len)
{
    struct sd_privmsg req = {.type = SD_PRIV_DESTROY, .domid = domid}, rep;
    return call(drv, &req, &rep, arg, err, len);
}

static int pv_pause(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    struct sd_privmsg req = {.type = SD_PRIV_PAUSE, .domid = domid}, rep;
    return call(drv, &req, &rep, NULL, err, len) < 0 ? -1 : 0;
}

static int pv_crash(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    struct sd_privmsg req = {.type = SD_PRIV_CRASH, .domid = domid}, rep;
    return call(drv, &req, &rep, NULL, err, len) < 0 ? -1 : 0;
}

static int pv_unpause(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    struct sd_privmsg req = {.type = SD_PRIV_UNPAUSE, .domid = domid}, rep;
    return call(drv, &req, &rep, NULL, err, len) < 0 ? -1 : 0;
}

static int pv_settle(struct sd_drv *drv, const struct sd_domconf *d, unsigned domid, char *err,
                     size_t len)
{
    (void)d; /* shadowd-priv finds the domain's config from its name */
    struct sd_privmsg req = {.type = SD_PRIV_SETTLE, .domid = domid}, rep;
    return call(drv, &req, &rep, NULL, err, len) < 0 ? -1 : 0;
}

static int pv_watch(struct sd_drv *drv, unsigned domid)
{
    struct sd_privmsg req = {.type = SD_PRIV_WATCH, .domid = domid}, rep;
    char err[SD_PRIV_ERR];
    return call(drv, &req, &rep, NULL, err, sizeof(err)) < 0 ? -1 : 0;
}

static void pv_unwatch(struct sd_drv *drv, unsigned domid)
{
    struct sd_privmsg req = {.type = SD_PRIV_UNWATCH, .domid = domid}, rep;
    char err[SD_PRIV_ERR];
    call(drv, &req, &rep, NULL, err, sizeof(err));
}

const struct sd_drv_ops sd_drv_priv = {
    .name = "priv",
    .close = pv_close,
    .find = pv_find,
    .info = pv_info,
    .look = pv_look,
    .create = pv_create,
    .destroy = pv_destroy,
    .pause = pv_pause,
    .crash = pv_crash,
    .unpause = pv_unpause,
    .settle = pv_settle,
    .watch = pv_watch,
    .unwatch = pv_unwatch,
};
