/* drv_libvirt.c - the libvirt domain driver: one connection (libvirt-uri,
 * else libvirt's default) for every libvirt domain of the config.
 *
 *  - create: if libvirt holds a persistent, inactive domain of the name, it
 *    is started (virDomainCreate: libvirt's definition wins); else the
 *    operator's XML (libvirt-xml) is created as a transient domain
 *    (virDomainCreateXML), renamed and without its <uuid> for the standby;
 *  - destroy: virDomainDestroy; a domain already gone is destroyed;
 *  - find / info: by name / by ID, virDomainGetState;
 *  - death: lifecycle events (virConnectDomainEventRegisterAny) through
 *    libvirt's event loop run on shadowd's poll (lvevent.c). A stopped
 *    domain has no ID any more, so events are matched by UUID to the
 *    domains this driver knows, and the stop reason is kept for info();
 *  - fault injection: pause is virDomainSuspend; libvirt has no portable way
 *    to make a guest kernel crash, so crash is virDomainDestroy (the domain
 *    dies at once, as in a crash, reported as destroyed).
 *
 * Everything completes at once (libvirt's calls are synchronous). Tested
 * against libvirt's built-in test driver (test:///default); see
 * dom0-tools/README.md for what that driver cannot show. */
#define _GNU_SOURCE
#include "drv.h"
#include "lvevent.h"
#include "lvxml.h"

#include <errno.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_KNOWN 64

/* A domain this driver created or found: its UUID outlives its ID. */
struct known {
    bool used;
    unsigned domid;
    unsigned char uuid[VIR_UUID_BUFLEN];
    int stopped; /* -1 running; else VIR_DOMAIN_EVENT_STOPPED_* of its stop */
    uint64_t stopped_ms;
};

struct sd_drv {
    virConnectPtr conn;
    int cb_id;
    struct sd_drv_hooks hooks;
    struct known known[MAX_KNOWN];
    unsigned next; /* replacement cursor once known[] is full */
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

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static const char *lverr(void)
{
    const char *m = virGetLastErrorMessage();
    return m ? m : "unknown libvirt error";
}

/* libvirt prints every error to stderr by default; ours carry them instead. */
static void quiet(void *opaque, virErrorPtr e)
{
    (void)opaque;
    (void)e;
}

static int lv_check(const struct sd_domconf *d, FILE *err)
{
    if (sd_lvxml_check(d->libvirt_xml, d->name, err) < 0) {
        fprintf(err, "%s:%u: domain '%s': libvirt-xml %s is not usable\n", d->file, d->line,
                d->name, d->libvirt_xml);
        return -1;
    }
    return 0;
}

static struct known *known_by_domid(struct sd_drv *drv, unsigned domid)
{
    for (int i = 0; i < MAX_KNOWN; i++)
        if (drv->known[i].used && drv->known[i].domid == domid)
            return &drv->known[i];
    return NULL;
}

static void remember(struct sd_drv *drv, virDomainPtr dom, unsigned domid)
{
    struct known *k = known_by_domid(drv, domid);
    if (!k) {
        for (int i = 0; i < MAX_KNOWN && !k; i++)
            if (!drv->known[i].used)
                k = &drv->known[i];
        if (!k)
            k = &drv->known[drv->next++ % MAX_KNOWN]; /* the oldest entries go first */
    }
    memset(k, 0, sizeof(*k));
    if (virDomainGetUUID(dom, k->uuid) < 0)
        return;
    /* A UUID names one domain at a time: an older domain of this XML is gone. */
    for (int i = 0; i < MAX_KNOWN; i++)
        if (&drv->known[i] != k && drv->known[i].used &&
            !memcmp(drv->known[i].uuid, k->uuid, sizeof(k->uuid)))
            drv->known[i].used = false;
    k->used = true;
    k->domid = domid;
    k->stopped = -1;
}

static void forget(struct sd_drv *drv, unsigned domid)
{
    struct known *k = known_by_domid(drv, domid);
    if (k)
        k->used = false;
}

static int lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
    (void)conn;
    struct sd_drv *drv = opaque;
    unsigned char uuid[VIR_UUID_BUFLEN];
    if (virDomainGetUUID(dom, uuid) < 0)
        return 0;
    for (int i = 0; i < MAX_KNOWN; i++) {
        struct known *k = &drv->known[i];
        if (!k->used || memcmp(k->uuid, uuid, sizeof(uuid)))
            continue;
        if (event != VIR_DOMAIN_EVENT_STOPPED && event != VIR_DOMAIN_EVENT_CRASHED &&
            event != VIR_DOMAIN_EVENT_SHUTDOWN)
            return 0; /* started, suspended, resumed, defined ...: not news for shadowd */
        if (event == VIR_DOMAIN_EVENT_STOPPED) {
            k->stopped = detail;
            k->stopped_ms = now_ms();
        }
        fprintf(stderr, "shadowd: libvirt: event %d/%d for domain %u (%s)\n", event, detail,
                k->domid, virDomainGetName(dom));
        drv->hooks.changed(drv->hooks.ctx, k->domid);
        return 0;
    }
    return 0;
}

static struct sd_drv *lv_open(const struct sd_conf *c, const struct sd_drv_hooks *h, char *err,
                              size_t len)
{
    sd_lvevent_register(); /* before the first connection */
    virSetErrorFunc(NULL, quiet);
    struct sd_drv *drv = calloc(1, sizeof(*drv));
    if (!drv) {
        seterr(err, len, "libvirt driver: out of memory");
        return NULL;
    }
    drv->hooks = *h;
    drv->conn = virConnectOpen(c->libvirt_uri);
    if (!drv->conn) {
        seterr(err, len, "libvirt: cannot connect to %s: %s",
               c->libvirt_uri ? c->libvirt_uri : "the default URI", lverr());
        free(drv);
        return NULL;
    }
    drv->cb_id = virConnectDomainEventRegisterAny(drv->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                                  VIR_DOMAIN_EVENT_CALLBACK(lifecycle), drv, NULL);
    if (drv->cb_id < 0) {
        seterr(err, len, "libvirt: cannot register for lifecycle events: %s", lverr());
        virConnectClose(drv->conn);
        free(drv);
        return NULL;
    }
    return drv;
}

static void lv_close(struct sd_drv *drv)
{
    if (!drv)
        return;
    virConnectDomainEventDeregisterAny(drv->conn, drv->cb_id);
    virConnectClose(drv->conn);
    sd_lvevent_sweep(); /* run the free functions of what libvirt removed */
    free(drv);
}

/* The running domain with this ID, or NULL (errno ENOENT: none). */
static virDomainPtr by_id(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    virDomainPtr dom = virDomainLookupByID(drv->conn, (int)domid);
    if (!dom) {
        virErrorPtr e = virGetLastError();
        if (e && e->code == VIR_ERR_NO_DOMAIN) {
            errno = ENOENT;
        } else {
            seterr(err, len, "libvirt: domain %u: %s", domid, lverr());
            errno = EIO;
        }
    }
    return dom;
}

static int lv_find(struct sd_drv *drv, const char *name, unsigned *domid, char *err, size_t len)
{
    virDomainPtr dom = virDomainLookupByName(drv->conn, name);
    if (!dom) {
        virErrorPtr e = virGetLastError();
        if (e && e->code == VIR_ERR_NO_DOMAIN) {
            seterr(err, len, "no domain called %s", name);
            errno = ENOENT;
        } else {
            seterr(err, len, "libvirt: looking up %s: %s", name, lverr());
            errno = EIO;
        }
        return -1;
    }
    unsigned id = virDomainGetID(dom);
    if (id == (unsigned)-1) { /* defined but not running: create() starts it */
        virDomainFree(dom);
        seterr(err, len, "domain %s is defined but not running", name);
        errno = ENOENT;
        return -1;
    }
    remember(drv, dom, id);
    virDomainFree(dom);
    *domid = id;
    return 0;
}

static int lv_info(struct sd_drv *drv, unsigned domid, struct sd_domstat *st, char *err, size_t len)
{
    memset(st, 0, sizeof(*st));
    st->reason = -1;
    virDomainPtr dom = by_id(drv, domid, err, len);
    if (!dom) {
        if (errno != ENOENT)
            return -1;
        /* Stopped: its ID is gone. Say why, if an event told us. */
        struct known *k = known_by_domid(drv, domid);
        st->run = SD_RUN_GONE;
        if (k && (k->stopped == VIR_DOMAIN_EVENT_STOPPED_CRASHED ||
                  k->stopped == VIR_DOMAIN_EVENT_STOPPED_FAILED)) {
            st->run = SD_RUN_SHUTDOWN;
            st->reason = SD_SHUT_CRASH;
            st->shutdown_ms = k->stopped_ms;
        } else if (k && k->stopped == VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN) {
            st->run = SD_RUN_SHUTDOWN;
            st->reason = SD_SHUT_POWEROFF;
            st->shutdown_ms = k->stopped_ms;
        }
        return 0;
    }
    int state = 0, reason = 0;
    if (virDomainGetState(dom, &state, &reason, 0) < 0) {
        seterr(err, len, "libvirt: state of domain %u: %s", domid, lverr());
        virDomainFree(dom);
        return -1;
    }
    const char *name = virDomainGetName(dom);
    snprintf(st->name, sizeof(st->name), "%s", name ? name : "");
    switch (state) {
    case VIR_DOMAIN_RUNNING:
    case VIR_DOMAIN_BLOCKED:
        st->run = SD_RUN_RUNNING;
        break;
    case VIR_DOMAIN_PAUSED:
    case VIR_DOMAIN_PMSUSPENDED:
        st->run = SD_RUN_PAUSED;
        break;
    case VIR_DOMAIN_CRASHED: /* on_crash=preserve: still there, with its ID */
        st->run = SD_RUN_SHUTDOWN;
        st->reason = SD_SHUT_CRASH;
        break;
    case VIR_DOMAIN_SHUTDOWN: /* being shut down */
        st->run = SD_RUN_DYING;
        break;
    default: /* shut off, or a state we do not know: not serving */
        st->run = SD_RUN_SHUTDOWN;
        st->reason = state == VIR_DOMAIN_SHUTOFF && reason == VIR_DOMAIN_SHUTOFF_CRASHED
                         ? SD_SHUT_CRASH
                         : SD_SHUT_POWEROFF;
        break;
    }
    virDomainFree(dom);
    return 0;
}

static int lv_create(struct sd_drv *drv, const struct sd_domconf *d, const char *name, bool boost,
                     void *arg, unsigned *domid, char *err, size_t len)
{
    (void)arg;
    (void)boost; /* boot-weight is the libxl driver's */
    virDomainPtr dom = virDomainLookupByName(drv->conn, name);
    if (dom && virDomainIsPersistent(dom) == 1 && virDomainIsActive(dom) == 0) {
        if (virDomainCreate(dom) < 0) {
            seterr(err, len, "libvirt: starting the defined domain %s: %s", name, lverr());
            virDomainFree(dom);
            return -1;
        }
        fprintf(stderr, "shadowd: libvirt: started %s from the definition libvirt holds\n", name);
    } else {
        if (dom) { /* running already: find() would have adopted it */
            virDomainFree(dom);
            seterr(err, len, "libvirt: a domain called %s is already running", name);
            return -1;
        }
        char *xml = sd_lvxml_load(d->libvirt_xml, name, err, len);
        if (!xml)
            return -1;
        dom = virDomainCreateXML(drv->conn, xml, 0);
        free(xml);
        if (!dom) {
            seterr(err, len, "libvirt: creating %s from %s: %s", name, d->libvirt_xml, lverr());
            return -1;
        }
    }
    unsigned id = virDomainGetID(dom);
    if (id == (unsigned)-1) {
        seterr(err, len, "libvirt: %s was created but has no ID (stopped at once?)", name);
        virDomainFree(dom);
        return -1;
    }
    remember(drv, dom, id);
    virDomainFree(dom);
    *domid = id;
    return SD_DRV_DONE;
}

static int lv_destroy(struct sd_drv *drv, unsigned domid, void *arg, char *err, size_t len)
{
    (void)arg;
    virDomainPtr dom = by_id(drv, domid, err, len);
    if (!dom) {
        if (errno != ENOENT)
            return -1;
        forget(drv, domid);
        return SD_DRV_DONE; /* gone already */
    }
    int rc = virDomainDestroy(dom);
    if (rc < 0)
        seterr(err, len, "libvirt: destroying domain %u: %s", domid, lverr());
    virDomainFree(dom);
    if (rc < 0)
        return -1;
    forget(drv, domid);
    return SD_DRV_DONE;
}

/* op on the running domain domid (doing: what op does, for the message). */
static int lv_act(struct sd_drv *drv, unsigned domid, int (*op)(virDomainPtr), const char *doing,
                  char *err, size_t len)
{
    virDomainPtr dom = by_id(drv, domid, err, len);
    if (!dom) {
        if (errno == ENOENT)
            seterr(err, len, "no running domain %u", domid);
        return -1;
    }
    int rc = op(dom);
    if (rc < 0)
        seterr(err, len, "libvirt: %s domain %u: %s", doing, domid, lverr());
    virDomainFree(dom);
    return rc < 0 ? -1 : 0;
}

static int lv_pause(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    return lv_act(drv, domid, virDomainSuspend, "suspending", err, len);
}

static int lv_unpause(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    return lv_act(drv, domid, virDomainResume, "resuming", err, len);
}

static int lv_crash(struct sd_drv *drv, unsigned domid, char *err, size_t len)
{
    /* see the top: the nearest libvirt has to a crash */
    return lv_act(drv, domid, virDomainDestroy, "destroying", err, len);
}

static int lv_watch(struct sd_drv *drv, unsigned domid)
{
    if (known_by_domid(drv, domid))
        return 0;
    char err[256];
    virDomainPtr dom = by_id(drv, domid, err, sizeof(err));
    if (!dom)
        return -1;
    remember(drv, dom, domid);
    virDomainFree(dom);
    return 0;
}

static void lv_unwatch(struct sd_drv *drv, unsigned domid)
{
    (void)drv;
    (void)domid; /* kept: info() still wants the stop reason of a domain being recovered */
}

static int lv_prepoll(struct sd_drv *drv, struct pollfd *fds, int max, int *timeout_ms)
{
    (void)drv;
    return sd_lvevent_prepoll(fds, max, timeout_ms);
}

static void lv_postpoll(struct sd_drv *drv, struct pollfd *fds, int n)
{
    (void)drv;
    sd_lvevent_postpoll(fds, n);
}

const struct sd_drv_ops sd_drv_libvirt = {
    .name = "libvirt",
    .check = lv_check,
    .open = lv_open,
    .close = lv_close,
    .find = lv_find,
    .info = lv_info,
    .create = lv_create,
    .destroy = lv_destroy,
    .pause = lv_pause,
    .crash = lv_crash,
    .unpause = lv_unpause,
    .watch = lv_watch,
    .unwatch = lv_unwatch,
    .prepoll = lv_prepoll,
    .postpoll = lv_postpoll,
};
