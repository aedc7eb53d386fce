/* sf_conn.c - the connection driver (see sf_conn.h): handshake, watches,
 * detection, and the recovery's fault / fail / replayed steps. */
#define _GNU_SOURCE
#include "sf_conn.h"

#include "sf_time.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xen/io/xenbus.h>

#define TICK_MS          50u  /* while requests are outstanding */
#define DOWN_TICK_MS     200u /* handshake re-evaluation while not connected */
#define SETUP_RETRY_MS   500u
#define MIN_HANDSHAKE_MS 5000u
#define TOKEN_REL        "sf-release"
#define MAX_REL_EVENTS   256 /* @releaseDomain events drained per turn */

void sfc_log(const struct sfc *c, enum sf_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sf_vlogf(c->cfg.log, c->cfg.log_arg, level, fmt, ap);
    va_end(ap);
}

/* ---- publishing ---- */

static void publish(struct sfc *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void publish(struct sfc *c, const char *key, const char *fmt, ...)
{
    char val[SF_REPORT_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof(val), fmt, ap);
    va_end(ap);
    if (sfx_write(&c->x, key, "%s", val) < 0)
        sfc_log(c, SF_LOG_ERR, "xenstore write %s/%s: %m", c->device, key);
}

static void set_fe_state(struct sfc *c, int state)
{
    if (sfx_set_state(&c->x, state) < 0)
        sfc_log(c, SF_LOG_ERR, "xenstore write %s/state (%s): %m", c->device,
                xsu_state_name(state));
}

static void state_changed(struct sfc *c)
{
    if (c->ops->state_changed)
        c->ops->state_changed(c->cls);
}

/* ---- faults, failure, the end of a recovery ---- */

static bool oldest_of(const struct sfc *c, uint64_t *since)
{
    return c->ops->oldest && c->ops->oldest(c->cls, since);
}

static void teardown(struct sfc *c)
{
    c->ops->teardown(c->cls, &c->x);
    c->phase = SFC_DOWN;
}

void sfc_alive(struct sfc *c, uint64_t now)
{
    c->last_alive = now;
}

void sfc_fail(struct sfc *c, const char *why)
{
    sfr_fail(&c->rec);
    teardown(c);
    char what[256] = "the device stays down";
    if (c->ops->fail)
        c->ops->fail(c->cls, what, sizeof(what));
    set_fe_state(c, XenbusStateClosed);
    publish(c, USK_FE_STATE, "%s", USK_STATE_FAILED);
    sfc_log(c, SF_LOG_ERR, "FAILED: %s; %s", why, what);
    state_changed(c);
}

uint64_t sfc_first_sign(const struct sfc *c, uint64_t now)
{
    uint64_t oldest = 0;
    if (!oldest_of(c, &oldest))
        return now;
    uint64_t t = oldest > c->last_alive ? oldest : c->last_alive;
    return t < now ? t : now;
}

void sfc_fault(struct sfc *c, enum sf_kind kind, const char *fmt, ...)
{
    if (c->rec.state == SF_FAILED)
        return;
    char detail[SF_REPORT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    uint64_t now = sf_now_ms(), evidence = sfc_first_sign(c, now);
    char held[256] = "nothing held";
    if (c->ops->isolate)
        c->ops->isolate(c->cls, held, sizeof(held));
    teardown(c);
    set_fe_state(c, XenbusStateClosed);
    bool report = sfr_detect(&c->rec, kind, detail, now, evidence);
    if (c->rec.state == SF_CONNECTING) {
        sfc_log(c, SF_LOG_ERR, "connecting to backend %s (domain %u): %s: %s; retrying", c->x.be,
                c->x.be_id, sf_kind_name(kind), detail);
        c->hs_retry_at = now + SETUP_RETRY_MS;
        state_changed(c);
        return;
    }
    if (report) {
        publish(c, USK_FE_REPORT, "%s", c->rec.report);
        publish(c, USK_FE_STATE, "%s", USK_STATE_RECOVERING);
    }
    sfc_log(c, SF_LOG_ERR,
            "backend %s (domain %u) failed: %s: %s; recovering: %s (fault %u of this recovery)",
            c->x.be, c->x.be_id, sf_kind_name(kind), detail, held, c->rec.faults);
    state_changed(c);
}

bool sfc_replaying(const struct sfc *c)
{
    return c->rec.replaying;
}

void sfc_replayed(struct sfc *c, uint64_t now, const char *extra)
{
    sfr_replayed(&c->rec, now);
    publish(c, USK_FE_RECOVERIES, "%" PRIu64, c->rec.recoveries);
    publish(c, USK_FE_LAST_RECOVERY, "%s", c->rec.last);
    publish(c, USK_FE_STATE, "%s", USK_STATE_LIVE);
    sfc_log(c, SF_LOG_INFO, "recovered on backend %s (domain %u): %s; recovery %" PRIu64 "%s",
            c->x.be, c->x.be_id, c->rec.last, c->rec.recoveries, extra ? extra : "");
    state_changed(c);
}

/* ---- the handshake ---- */

static unsigned handshake_ms(const struct sfc *c)
{
    return c->cfg.deadline_ms > MIN_HANDSHAKE_MS ? c->cfg.deadline_ms : MIN_HANDSHAKE_MS;
}

/* Closed, and the next setup no sooner than SETUP_RETRY_MS from now. */
static void retry_later(struct sfc *c, uint64_t now)
{
    teardown(c);
    set_fe_state(c, XenbusStateClosed);
    c->hs_retry_at = now + SETUP_RETRY_MS;
}

static void connected(struct sfc *c, uint64_t now)
{
    bool first = c->rec.state == SF_CONNECTING;
    char what[512] = "";
    int r = c->ops->connect(c->cls, &c->x, first, what, sizeof(what));
    if (r == SFC_MISMATCH) {
        sfc_fail(c, what);
        return;
    }
    if (r < 0) {
        sfc_log(c, SF_LOG_ERR, "backend %s (domain %u) connected but unusable; retrying", c->x.be,
                c->x.be_id);
        retry_later(c, now);
        return;
    }
    if (c->ops->setup_state != XenbusStateConnected)
        set_fe_state(c, XenbusStateConnected);
    c->phase = SFC_UP;
    c->last_alive = now;
    sfr_connected(&c->rec, now);
    if (first) {
        publish(c, USK_FE_RECOVERIES, "%" PRIu64, c->rec.recoveries);
        publish(c, USK_FE_STATE, "%s", USK_STATE_LIVE);
    }
    sfc_log(c, SF_LOG_INFO, "%s to backend %s (domain %u): %s", first ? "connected" : "reconnected",
            c->x.be, c->x.be_id, what);
    state_changed(c);
}

static void drive_handshake(struct sfc *c, uint64_t now)
{
    if (c->rec.state == SF_FAILED)
        return;
    if (!c->x.be[0] && sfx_read_backend(&c->x) < 0)
        return; /* the toolstack has not written the device dir yet */
    int st = sfx_backend_state(&c->x);
    if (c->phase == SFC_DOWN) {
        if (st == XenbusStateInitWait) {
            if (now < c->hs_retry_at)
                return;
            char why[256] = "";
            int r = c->ops->setup(c->cls, &c->x, why, sizeof(why));
            if (r == SFC_MISMATCH) {
                sfc_fail(c, why);
                return;
            }
            if (r < 0) {
                teardown(c);
                c->hs_retry_at = now + SETUP_RETRY_MS;
                return;
            }
            c->phase = SFC_SETUP;
            c->hs_since = now;
            set_fe_state(c, c->ops->setup_state);
        } else if (st == XenbusStateClosed) {
            set_fe_state(c, XenbusStateInitialising); /* ask it back to InitWait */
        } else if (st == XenbusStateConnected && c->rec.state == SF_CONNECTING && !c->asked_close) {
            sfc_log(c, SF_LOG_INFO, "backend %s is still Connected to an earlier frontend; closing",
                    c->x.be);
            set_fe_state(c, XenbusStateClosed);
            c->asked_close = true;
        }
        return;
    }
    if (c->phase != SFC_SETUP)
        return;
    if (st == XenbusStateConnected) {
        connected(c, now);
    } else if (st == XenbusStateInitWait || st == XenbusStateInitialised) {
        if (now - c->hs_since > handshake_ms(c)) {
            sfc_log(c, SF_LOG_ERR, "backend %s (domain %u) did not connect within %u ms; retrying",
                    c->x.be, c->x.be_id, handshake_ms(c));
            teardown(c);
            set_fe_state(c, XenbusStateClosed);
        }
    } else {
        sfc_log(c, SF_LOG_INFO, "backend %s went %s during the handshake; retrying", c->x.be,
                st < 0 ? "away" : xsu_state_name(st));
        retry_later(c, now);
    }
}

/* ---- watches ---- */

/* The backend dir changed while connected. */
static void monitor_backend(struct sfc *c)
{
    int st = sfx_backend_state(&c->x);
    if (st == XenbusStateConnected)
        return;
    if (st < 0 && errno == ENOENT)
        sfc_fault(c, SF_BACKEND_VANISHED, "backend dir %s is gone", c->x.be);
    else if (st < 0)
        sfc_fault(c, SF_BACKEND_VANISHED, "backend state %s/state unreadable: %s", c->x.be,
                  strerror(errno));
    else if (st == XenbusStateClosing || st == XenbusStateClosed)
        sfc_fault(c, SF_BACKEND_CLOSED, "backend went %s unasked", xsu_state_name(st));
    else
        sfc_fault(c, SF_BACKEND_RESTARTED, "backend went back to %s", xsu_state_name(st));
}

static void on_generation(struct sfc *c)
{
    uint64_t g;
    if (sfx_read_generation(&c->x, &g) < 0) {
        sfc_log(c, SF_LOG_ERR, "xenstore read %s/%s: %m", c->device, USK_FE_GENERATION);
        return;
    }
    if (g <= c->gen)
        return;
    c->gen = g;
    if (sfx_read_backend(&c->x) < 0) {
        sfc_log(c, SF_LOG_ERR, "generation %" PRIu64 ": cannot use %s/backend and backend-id: %m",
                g, c->device);
        return;
    }
    sfc_log(c, SF_LOG_INFO, "generation %" PRIu64 ": backend is now %s (domain %u)", g, c->x.be,
            c->x.be_id);
    if (c->phase == SFC_UP)
        sfc_fault(c, SF_BACKEND_RESTARTED,
                  "rewired by the toolstack to %s (generation %" PRIu64 ")", c->x.be, g);
    else if (c->phase == SFC_SETUP)
        teardown(c);
    if (c->rec.state != SF_FAILED) {
        /* A fresh backend: tell it at once we are starting over. */
        set_fe_state(c, XenbusStateInitialising);
        c->hs_retry_at = 0;
    }
}

/* A domain went away somewhere: is it our backend's? The answer is used
 * only when the call worked (an unprivileged guest may not ask). */
static void on_release(struct sfc *c)
{
    if (!c->xs_rel)
        return;
    bool rel = false;
    char **w;
    for (int i = 0; i < MAX_REL_EVENTS && (w = xs_check_watch(c->xs_rel)) != NULL; i++) {
        rel = true;
        free(w);
    }
    if (!rel || c->phase == SFC_DOWN)
        return;
    errno = 0;
    if (!xs_is_domain_introduced(c->xs_rel, c->x.be_id) && errno == 0)
        sfc_fault(c, SF_BACKEND_VANISHED, "driver domain %u is gone (@releaseDomain)", c->x.be_id);
}

/* ---- the owner's loop ---- */

void sfc_pollfds(const struct sfc *c, struct pollfd *p)
{
    p[0] = (struct pollfd){.fd = c->x_open ? sfx_fd(&c->x) : -1, .events = POLLIN};
    p[1] = (struct pollfd){.fd = c->xs_rel ? xs_fileno(c->xs_rel) : -1, .events = POLLIN};
}

void sfc_step(struct sfc *c, uint64_t now)
{
    unsigned ev = sfx_events(&c->x);
    if (ev & SFX_EV_GENERATION)
        on_generation(c);
    if (c->phase == SFC_UP && (ev & SFX_EV_BACKEND))
        monitor_backend(c);
    on_release(c);
    if (c->phase != SFC_UP)
        drive_handshake(c, now);
}

int sfc_timeout(const struct sfc *c, uint64_t now, unsigned idle_ms)
{
    if (c->phase != SFC_UP)
        return (int)DOWN_TICK_MS;
    uint64_t oldest;
    if (!oldest_of(c, &oldest))
        return (int)idle_ms;
    uint64_t due = oldest + c->cfg.deadline_ms;
    uint64_t left = due > now ? due - now : 0;
    unsigned tick = c->cfg.tick_ms ? c->cfg.tick_ms : TICK_MS;
    if (left > tick)
        left = tick;
    return (int)(left < idle_ms ? left : idle_ms);
}

bool sfc_overdue(const struct sfc *c, uint64_t now, uint64_t *age)
{
    uint64_t oldest;
    if (c->phase != SFC_UP || !oldest_of(c, &oldest) || now < oldest ||
        now - oldest < c->cfg.deadline_ms)
        return false;
    *age = now - oldest;
    return true;
}

void sfc_begin(struct sfc *c)
{
    if (sfx_read_generation(&c->x, &c->gen) < 0)
        c->gen = 0;
    if (sfx_read_backend(&c->x) < 0)
        sfc_log(c, SF_LOG_ERR, "cannot use %s/backend and backend-id (%m); waiting", c->device);
    set_fe_state(c, XenbusStateInitialising);
}

void sfc_end(struct sfc *c)
{
    teardown(c);
    set_fe_state(c, XenbusStateClosed);
}

int sfc_open(struct sfc *c, const struct sfc_ops *ops, void *cls, const struct sfc_config *cfg)
{
    memset(c, 0, sizeof(*c));
    c->ops = ops;
    c->cls = cls;
    c->cfg = *cfg;
    snprintf(c->device, sizeof(c->device), "%s", cfg->device);
    c->cfg.device = c->device;
    sfr_init(&c->rec);
    if (sfx_open(&c->x, c->device) < 0) {
        sfc_log(c, SF_LOG_ERR, "xenstore: open and watch %s/%s: %m", c->device, USK_FE_GENERATION);
        return -1;
    }
    c->x_open = true;
    c->xs_rel = xs_open(0);
    if (c->xs_rel && !xs_watch(c->xs_rel, "@releaseDomain", TOKEN_REL)) {
        sfc_log(c, SF_LOG_DEBUG,
                "watch @releaseDomain: %m (domain death is seen through the backend dir)");
        xs_close(c->xs_rel);
        c->xs_rel = NULL;
    }
    return 0;
}

void sfc_close(struct sfc *c)
{
    if (!c)
        return;
    if (c->xs_rel)
        xs_close(c->xs_rel);
    c->xs_rel = NULL;
    if (c->x_open)
        sfx_close(&c->x);
    c->x_open = false;
}
