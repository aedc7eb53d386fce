/* sf_conn.c - the connection driver (see sf_conn.h): handshake, watches,
 * detection, and the recovery's fault / fail / replayed steps. */
#define _GNU_SOURCE
#include "sf_conn.h"

#include "sf_time.h"
#include "pv-keys.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xen/io/xenbus.h>

#define TICK_MS          50u   /* while requests are outstanding */
#define DOWN_TICK_MS     200u  /* handshake re-evaluation while not connected */
#define CHORE_HOLD_MS    1000u /* a switch's chores wait at most this for its replay */
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

static void switch_flush(struct sfc *c);

static void publish_now(struct sfc *c, const char *key, const char *val)
{
    if (sfx_write_dev(&c->x, key, "%s", val) < 0)
        sfc_log(c, SF_LOG_ERR, "xenstore write %s/%s: %m", c->device, key);
}

/* The recovery's end: shadow/recoveries, last-recovery and state live. */
static void live_now(struct sfc *c)
{
    char n[24];
    snprintf(n, sizeof(n), "%" PRIu64, c->rec.recoveries);
    publish_now(c, USK_FE_RECOVERIES, n);
    publish_now(c, USK_FE_LAST_RECOVERY, c->rec.last);
    publish_now(c, USK_FE_STATE, USK_STATE_LIVE);
}

/* Every write goes after what a switch left (switch_chore), so that none
 * of those lands on top of a later one. */
static void publish(struct sfc *c, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void publish(struct sfc *c, const char *key, const char *fmt, ...)
{
    char val[SF_REPORT_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof(val), fmt, ap);
    va_end(ap);
    switch_flush(c);
    publish_now(c, key, val);
}

static void set_fe_state(struct sfc *c, int state)
{
    switch_flush(c);
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

/* The keys a hot switch left in the failed connection's dir (ops->forget):
 * the last of its chores (switch_chore), or before anything else is set up
 * or torn down if that comes first - never after keys of a later
 * connection in the same dir. */
static void forget_now(struct sfc *c)
{
    if (!c->forget_left)
        return;
    struct sfx old = c->x; /* the device's xenstore connection, the old dir */
    sfx_set_link_dir(&old, c->switch_dir);
    c->forget_left = false;
    c->ops->forget(c->cls, &old);
}

/* What a hot switch left (switch_from_live, promote), one a turn: each is
 * a xenstore round trip or more (tens of ms in a guest on real Xen in
 * QEMU, the forget several), and the class's data path runs between them -
 * the replay's first responses are harvested while they go on, not after
 * all of them. Any other write does what is left first (switch_flush).
 * true if there was one. */
static bool switch_chores_left(const struct sfc *c);

static bool switch_chore(struct sfc *c)
{
    uint64_t t0 = sf_now_ms();
    const char *what;
    if (c->switch_report) {
        what = "report";
        c->switch_report = false;
        publish_now(c, USK_FE_REPORT, c->rec.report);
    } else if (c->live_left) {
        /* Before the rest: shadowd's recovery ends when it reads live. None
         * of the keys is one the rest write (state, the transport's). */
        what = "recovered";
        c->live_left = false;
        live_now(c);
    } else if (c->watch_left) {
        what = "backend watched";
        c->watch_left = false;
        /* (no fault from here: a flush may run this inside a teardown) */
        if (c->phase == SFC_UP && sfx_read_backend(&c->x) < 0)
            sfc_log(c, SF_LOG_ERR,
                    "promoted backend %s: cannot watch it: %m; its failure is seen by the "
                    "deadline alone",
                    c->x.be);
    } else if (c->sx_closing) {
        what = "slot connection closed";
        xs_close(c->sx_closing);
        c->sx_closing = NULL;
    } else if (c->switch_closed_left) {
        what = "old state";
        c->switch_closed_left = false;
        if (xsu_write_state(sfx_xs(&c->x), c->switch_dir, XenbusStateClosed) < 0)
            sfc_log(c, SF_LOG_ERR, "xenstore write %s/state (%s): %m", c->switch_dir,
                    xsu_state_name(XenbusStateClosed));
    } else if (c->switch_recovering) {
        what = "recovering";
        c->switch_recovering = false;
        if (c->rec.state == SF_RECOVERING) /* not once replayed: live stands */
            publish_now(c, USK_FE_STATE, USK_STATE_RECOVERING);
    } else if (c->forget_left) {
        what = "forget";
        forget_now(c);
    } else {
        return false;
    }
    /* Where a switch's time in the guest goes: one line once all are done. */
    size_t n = strlen(c->chores_done);
    if (!n)
        c->chores_since = t0;
    snprintf(c->chores_done + n, sizeof(c->chores_done) - n, "%s%s %" PRIu64 " ms", n ? ", " : "",
             what, sf_now_ms() - t0);
    if (!switch_chores_left(c)) {
        sfc_log(c, SF_LOG_INFO,
                "the switch's xenstore work done, %" PRIu64 " ms after it began: %s",
                sf_now_ms() - c->chores_since, c->chores_done);
        c->chores_done[0] = 0;
    }
    return true;
}

static bool switch_chores_left(const struct sfc *c)
{
    return c->watch_left || c->sx_closing || c->switch_closed_left || c->switch_report ||
           c->switch_recovering || c->forget_left || c->live_left;
}

/* The next chore may run: the replay is done (its first answers were not
 * kept waiting behind round trips: on real Xen in QEMU the first chore
 * alone took 114 ms and held the first tx answer to 215 ms after the
 * switch), or it has taken CHORE_HOLD_MS. */
static bool switch_chore_due(const struct sfc *c, uint64_t now)
{
    return switch_chores_left(c) &&
           (c->rec.state != SF_RECOVERING || now >= c->switch_ms + CHORE_HOLD_MS);
}

static void switch_flush(struct sfc *c)
{
    while (switch_chore(c))
        ;
}

static void teardown(struct sfc *c)
{
    switch_flush(c);
    c->ops->teardown(c->cls, &c->x);
    c->phase = SFC_DOWN;
}

void sfc_alive(struct sfc *c, uint64_t now)
{
    c->last_alive = now;
}

static void sb_drop(struct sfc *c, const char *why);

void sfc_fail(struct sfc *c, const char *why)
{
    sfr_fail(&c->rec);
    teardown(c);
    sb_drop(c, NULL);
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
    uint64_t torn = sf_now_ms() - now;
    if (!c->switching)
        set_fe_state(c, XenbusStateClosed); /* a switch writes it after (switch_from_live) */
    bool report = sfr_detect(&c->rec, kind, detail, now, evidence);
    if (c->rec.state == SF_CONNECTING) {
        sfc_log(c, SF_LOG_ERR, "connecting to backend %s (domain %u): %s: %s; retrying", c->x.be,
                c->x.be_id, sf_kind_name(kind), detail);
        c->hs_retry_at = now + SETUP_RETRY_MS;
        state_changed(c);
        return;
    }
    if (report && !c->switching) {
        publish(c, USK_FE_REPORT, "%s", c->rec.report);
        publish(c, USK_FE_STATE, "%s", USK_STATE_RECOVERING);
    }
    sfc_log(c, SF_LOG_ERR,
            "backend %s (domain %u) failed: %s: %s; recovering: %s (fault %u of this recovery; "
            "its transport torn down in %" PRIu64 " ms)",
            c->x.be, c->x.be_id, sf_kind_name(kind), detail, held, c->rec.faults, torn);
    state_changed(c);
}

bool sfc_replaying(const struct sfc *c)
{
    return c->rec.replaying;
}

void sfc_replayed(struct sfc *c, uint64_t now, const char *extra)
{
    c->switch_recovering = false; /* live, written below, stands */
    sfr_replayed(&c->rec, now);
    /* After a hot switch, a chore (right after the report): the chores held for the
     * replay run now, one a turn, with the data path between them. */
    if (switch_chores_left(c))
        c->live_left = true; /* a later fault flushes it before anything of its own */
    else
        live_now(c); /* no chore left to go first */
    sfc_log(c, SF_LOG_INFO, "recovered on backend %s (domain %u): %s; recovery %" PRIu64 "%s",
            c->x.be, c->x.be_id, c->rec.last, c->rec.recoveries, extra ? extra : "");
    state_changed(c);
}

/* ---- the handshake ---- */

/* Doubled after each handshake that timed out, up to 8 times the first: a
 * backend that needs longer than that (a driver domain starved of CPU, as
 * under software emulation on a loaded host) is waited for, not torn down
 * every time just before it would have connected. */
static unsigned handshake_ms(const struct sfc *c)
{
    unsigned ms = c->cfg.deadline_ms > MIN_HANDSHAKE_MS ? c->cfg.deadline_ms : MIN_HANDSHAKE_MS;
    return ms << (c->hs_timeouts < 3 ? c->hs_timeouts : 3);
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
    c->hs_timeouts = 0;
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
            switch_flush(c);
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
            c->hs_timeouts++;
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

/* The dir a connection to backend be is made in: the slot whose backend it
 * is, else the device dir (schema.md, "The hot standby's connection"). */
static void link_dir_for(struct sfc *c, const char *be, char *dir, size_t len)
{
    static const char *const slots[] = {USK_FE_SLOT_A, USK_FE_SLOT_B};
    snprintf(dir, len, "%s", c->device);
    for (unsigned i = 0; i < 2; i++) {
        char sd[SFX_PATH_MAX + 32];
        snprintf(sd, sizeof(sd), "%s/%s/%s", c->device, USK_FE_SLOT_DIR, slots[i]);
        char *b = xsu_read(sfx_xs(&c->x), XBT_NULL, sd, PVK_BACKEND, SFX_PATH_MAX - 1);
        bool match = b && !strcmp(b, be);
        free(b);
        if (match && strlen(sd) < len) {
            snprintf(dir, len, "%s", sd);
            return;
        }
    }
}

/* Connected at once through the idle standby connection: no handshake, the
 * class's standby transport becomes the live one. The failed transport is
 * already down (sfc_fault). */
static void promote(struct sfc *c)
{
    uint64_t now = sf_now_ms(); /* after the fault's own clock reading */
    c->switch_ms = now;
    /* The data path first: the class takes the held transport over, its
     * backend the slot's. The device connection's watch on it and the
     * slot's own xenstore connection closed come after: each is a round
     * trip or more (hundreds of ms in a guest on real Xen in QEMU). */
    sfx_set_link_dir(&c->x, c->sx.fe);
    sfx_name_backend(&c->x, c->sx.be, c->sx.be_id);
    char what[512] = "";
    int r = c->ops->promote(c->cls, &c->x, what, sizeof(what));
    c->phase = SFC_UP; /* the promoted transport is the class's live one: teardown drops it */
    uint64_t t_class = sf_now_ms();
    /* The class's standby transport is the device's now. The device
     * connection's watch on its backend and the close of the slot's own
     * xenstore connection are the next turns' (switch_chore: 50-400 and
     * 30-500 ms on real Xen in QEMU), after the class's first harvest. */
    if (c->sx_closing) /* an earlier promotion's (cannot be: each waits a turn) */
        xs_close(c->sx_closing);
    c->sx_closing = sfx_xs(&c->sx);
    c->sx.xs = NULL;
    c->sx_open = false;
    c->sb_phase = SFC_DOWN;
    c->sb_slot[0] = 0;
    c->watch_left = r == 0;
    if (r == SFC_MISMATCH) {
        sfc_fail(c, what);
        return;
    }
    if (r < 0) {
        sfc_log(c, SF_LOG_ERR, "standby backend %s (domain %u) unusable at promotion; retrying",
                c->x.be, c->x.be_id);
        retry_later(c, now);
        set_fe_state(c, XenbusStateInitialising);
        return;
    }
    c->last_alive = now;
    c->promotions++;
    sfr_connected(&c->rec, now);
    /* With where the promotion's time went: seconds on real Xen in QEMU. */
    sfc_log(
        c, SF_LOG_INFO,
        "switched to the standby connection: backend %s (domain %u), no handshake (class %" PRIu64
        " ms): %s",
        c->x.be, c->x.be_id, t_class - now, what);
    state_changed(c);
}

/* The toolstack switched a live connection to the held one before this
 * frontend saw its backend fail (a hot promotion): the data path moves
 * first - the failed transport is dropped without what costs round trips
 * (the class may leave its unsharing and its keys until after), the held
 * one taken over - and what a fault writes to xenstore (the old dir's
 * state, the report) waits for the loop's next turns, once the class has
 * put its replay on the new transport, one a turn (switch_chore): each is
 * a round trip, and they were the larger part of the guest's share of a
 * switch (bench/README.md, "Sound"). */
static void switch_from_live(struct sfc *c, uint64_t g, const char *be)
{
    switch_flush(c); /* an earlier switch's: switch_dir is this one's now */
    uint64_t seq = c->rec.report_seq;
    c->switching = true;
    if (g)
        sfc_fault(c, SF_BACKEND_RESTARTED,
                  "rewired by the toolstack to %s (generation %" PRIu64 ")", be, g);
    else
        sfc_fault(c, SF_BACKEND_RESTARTED, "promoted by the toolstack: %s, its held standby", be);
    c->switching = false; /* only the failed transport's teardown leaves its keys */
    /* After the fault: its teardown did any forget still pending, in the
     * dir this holds until now. The link moves to the slot in promote. */
    snprintf(c->switch_dir, sizeof(c->switch_dir), "%s", c->x.fe);
    c->switch_report = c->rec.report_seq != seq; /* sfc_fault made a report */
    c->switch_closed_left = c->switch_recovering = true;
    if (c->rec.state == SF_FAILED)
        return;
    c->forget_left = c->ops->forget != NULL; /* the class's teardown left its keys there */
    promote(c);
}

/* The held standby's backend in FE/backend is its promotion: shadowd
 * writes it, backend-id and the generation, in that order, once the failed
 * domain is fenced (xenstore-schema/schema.md, "Promote"). So one read
 * decides, and the switch goes before the generation is read: from a
 * guest on real Xen in QEMU each read is a round trip of 20-100 ms, and
 * three of them were most of the guest's reaction to a promotion. */
static bool hot_switch_first(struct sfc *c)
{
    char be[SFX_PATH_MAX];
    if (c->sb_phase != SFC_UP || sfx_peek_backend_path(&c->x, be, sizeof(be)) < 0 ||
        strcmp(be, c->sx.be))
        return false;
    uint64_t before = c->gen, g;
    sfc_log(c, SF_LOG_INFO, "backend is now %s (domain %u), held idle: promoted", be, c->sx.be_id);
    if (c->phase == SFC_UP) {
        switch_from_live(c, 0, be);
    } else { /* its failure seen first */
        if (c->phase == SFC_SETUP)
            teardown(c);
        if (c->rec.state != SF_FAILED)
            promote(c);
    }
    if (sfx_read_generation(&c->x, &g) == 0 && g > before)
        c->gen = g;
    else
        c->gen_pending = true; /* its generation is still to come */
    return true;
}

static void on_generation(struct sfc *c)
{
    if (hot_switch_first(c))
        return;
    uint64_t g;
    if (sfx_read_generation(&c->x, &g) < 0) {
        sfc_log(c, SF_LOG_ERR, "xenstore read %s/%s: %m", c->device, USK_FE_GENERATION);
        return;
    }
    if (g <= c->gen)
        return;
    c->gen = g;
    char be[SFX_PATH_MAX];
    unsigned id;
    if (sfx_peek_backend(&c->x, be, sizeof(be), &id) < 0) {
        sfc_log(c, SF_LOG_ERR, "generation %" PRIu64 ": cannot use %s/backend and backend-id: %m",
                g, c->device);
        return;
    }
    bool own = c->gen_pending && c->phase == SFC_UP && !strcmp(be, c->x.be) && id == c->x.be_id;
    c->gen_pending = false;
    if (own)
        return; /* the promotion this frontend switched on already */
    bool hot = c->sb_phase == SFC_UP && !strcmp(be, c->sx.be) && id == c->sx.be_id;
    if (hot && c->phase == SFC_UP) {
        sfc_log(c, SF_LOG_INFO, "generation %" PRIu64 ": backend is now %s (domain %u), held idle",
                g, be, id);
        switch_from_live(c, g, be);
        return;
    }
    if (c->phase == SFC_UP)
        sfc_fault(c, SF_BACKEND_RESTARTED,
                  "rewired by the toolstack to %s (generation %" PRIu64 ")", be, g);
    else if (c->phase == SFC_SETUP)
        teardown(c);
    if (c->rec.state == SF_FAILED)
        return;
    if (hot) {
        sfc_log(c, SF_LOG_INFO, "generation %" PRIu64 ": backend is now %s (domain %u), held idle",
                g, be, id);
        promote(c);
        return;
    }
    char dir[SFX_PATH_MAX];
    link_dir_for(c, be, dir, sizeof(dir));
    if (c->sx_open && !strcmp(c->sx.fe, dir))
        sb_drop(c, "its backend is the device's now, not yet connected: a handshake there");
    sfx_set_link_dir(&c->x, dir);
    if (sfx_read_backend(&c->x) < 0) {
        sfc_log(c, SF_LOG_ERR, "generation %" PRIu64 ": cannot watch backend %s: %m", g, be);
        return;
    }
    sfc_log(c, SF_LOG_INFO, "generation %" PRIu64 ": backend is now %s (domain %u)%s%s", g, c->x.be,
            c->x.be_id, strcmp(dir, c->device) ? ", connecting in " : "",
            strcmp(dir, c->device) ? dir : "");
    /* A fresh backend: tell it at once we are starting over. */
    set_fe_state(c, XenbusStateInitialising);
    c->hs_retry_at = 0;
}

/* ---- the hot standby's idle connection ---- */

static bool has_standby(const struct sfc *c)
{
    return c->ops->promote && c->ops->standby_setup && c->ops->standby_connect &&
           c->ops->standby_teardown;
}

static void sb_teardown(struct sfc *c)
{
    if (c->sx_open && has_standby(c))
        c->ops->standby_teardown(c->cls, &c->sx); /* a half set-up one too */
    c->sb_phase = SFC_DOWN;
}

/* Drop the standby connection and its slot's xenstore connection. The slot
 * itself is the toolstack's: nothing is written there but our own keys'
 * removal (a removed slot must not come back). */
static void sb_drop(struct sfc *c, const char *why)
{
    if (!c->sx_open)
        return;
    sb_teardown(c);
    if (why)
        sfc_log(c, SF_LOG_INFO, "standby connection in %s dropped: %s", c->sb_slot, why);
    sfx_close(&c->sx);
    c->sx_open = false;
    c->sb_slot[0] = 0;
}

/* FE/shadow/standby changed: hold an idle connection in the slot it names. */
static void on_standby(struct sfc *c)
{
    if (!has_standby(c) || c->rec.state == SF_FAILED)
        return;
    char slot[16] = "", dir[SFX_PATH_MAX] = "";
    if (sfx_read_standby(&c->x, slot, sizeof(slot)) < 0) {
        if (errno != ENOENT)
            sfc_log(c, SF_LOG_ERR, "%s/%s is not a slot's name; ignored", c->device,
                    USK_FE_STANDBY);
        slot[0] = 0;
    } else if (snprintf(dir, sizeof(dir), "%s/%s/%s", c->device, USK_FE_SLOT_DIR, slot) >=
                   (int)sizeof(dir) ||
               !strcmp(dir, c->x.fe)) {
        slot[0] = 0; /* the live connection's own slot: nothing to hold */
    }
    if (c->sx_open && !strcmp(slot, c->sb_slot)) {
        if (sfx_read_backend(&c->sx) == 1 && c->sb_phase != SFC_DOWN) {
            sfc_log(c, SF_LOG_INFO, "standby slot %s now names backend %s; connecting afresh", slot,
                    c->sx.be);
            sb_teardown(c);
        }
        return;
    }
    sb_drop(c, slot[0] ? "the toolstack names another slot" : "the toolstack took it away");
    c->sb_refused = false;
    if (!slot[0])
        return;
    if (sfx_open_link(&c->sx, dir) < 0) {
        sfc_log(c, SF_LOG_ERR, "standby slot %s: xenstore: %m", dir);
        return;
    }
    c->sx_open = true;
    snprintf(c->sb_slot, sizeof(c->sb_slot), "%s", slot);
    c->sb_phase = SFC_DOWN;
    c->sb_retry_at = 0;
    if (sfx_read_backend(&c->sx) < 0)
        sfc_log(c, SF_LOG_ERR, "standby slot %s: backend unreadable (%m); waiting", dir);
    else
        sfc_log(c, SF_LOG_INFO,
                "standby slot %s: connecting to backend %s (domain %u), to hold idle", slot,
                c->sx.be, c->sx.be_id);
}

static void sb_retry_later(struct sfc *c, uint64_t now)
{
    sb_teardown(c);
    sfx_set_state(&c->sx, XenbusStateClosed);
    c->sb_retry_at = now + SETUP_RETRY_MS;
}

/* The standby's handshake: as the device's, but nothing is issued on it and
 * a failure touches only the standby connection. */
static void drive_standby(struct sfc *c, uint64_t now)
{
    if (!c->sx_open || c->sb_refused || c->rec.state == SF_FAILED || c->sb_phase == SFC_UP)
        return;
    if (!c->sx.be[0] && sfx_read_backend(&c->sx) < 0)
        return;
    int st = sfx_backend_state(&c->sx);
    char msg[512] = "";
    if (c->sb_phase == SFC_DOWN) {
        if (st == XenbusStateClosed && now >= c->sb_retry_at) {
            /* It closed in answer to our Closed (a retry): ask it back. */
            sfx_set_state(&c->sx, XenbusStateInitialising);
            c->sb_retry_at = now + SETUP_RETRY_MS;
            return;
        }
        if (st != XenbusStateInitWait || now < c->sb_retry_at)
            return;
        switch_flush(c);
        int r = c->ops->standby_setup(c->cls, &c->sx, msg, sizeof(msg));
        if (r == SFC_MISMATCH) {
            sfc_log(c, SF_LOG_ERR, "standby backend %s refused: %s", c->sx.be, msg);
            c->sb_refused = true;
            sb_retry_later(c, now);
            return;
        }
        if (r < 0) {
            sb_retry_later(c, now);
            return;
        }
        c->sb_phase = SFC_SETUP;
        c->sb_since = now;
        sfx_set_state(&c->sx, c->ops->setup_state);
        return;
    }
    if (st == XenbusStateConnected) {
        int r = c->ops->standby_connect(c->cls, &c->sx, msg, sizeof(msg));
        if (r == SFC_MISMATCH) {
            sfc_log(c, SF_LOG_ERR, "standby backend %s is not our device: %s; not held", c->sx.be,
                    msg);
            c->sb_refused = true;
            sb_retry_later(c, now);
            return;
        }
        if (r < 0) {
            sfc_log(c, SF_LOG_ERR, "standby backend %s connected but unusable; retrying", c->sx.be);
            sb_retry_later(c, now);
            return;
        }
        if (c->ops->setup_state != XenbusStateConnected)
            sfx_set_state(&c->sx, XenbusStateConnected);
        c->sb_phase = SFC_UP;
        sfc_log(c, SF_LOG_INFO, "standby connection up in %s: backend %s (domain %u), idle: %s",
                c->sb_slot, c->sx.be, c->sx.be_id, msg);
    } else if (st == XenbusStateInitWait || st == XenbusStateInitialised) {
        if (now - c->sb_since > handshake_ms(c)) {
            sfc_log(c, SF_LOG_ERR, "standby backend %s did not connect within %u ms; retrying",
                    c->sx.be, handshake_ms(c));
            sb_retry_later(c, now);
        }
    } else {
        sb_retry_later(c, now);
    }
}

void sfc_standby_fault(struct sfc *c, const char *fmt, ...)
{
    if (!c->sx_open || c->sb_phase == SFC_DOWN)
        return;
    char detail[SF_REPORT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    sfc_log(c, SF_LOG_ERR,
            "standby backend %s (domain %u) misbehaved while held: %s; set up afresh", c->sx.be,
            c->sx.be_id, detail);
    sb_retry_later(c, sf_now_ms());
}

/* Something under the standby's backend dir changed while it was held. */
static void monitor_standby(struct sfc *c, uint64_t now)
{
    int st = sfx_backend_state(&c->sx);
    if (c->sb_phase != SFC_UP || st == XenbusStateConnected)
        return;
    sfc_log(c, SF_LOG_INFO, "standby backend %s went %s; its idle connection is dropped", c->sx.be,
            st < 0 ? "away" : xsu_state_name(st));
    sb_retry_later(c, now);
}

/* A domain went away somewhere: is it our backend's? The answer is used
 * only when the call worked (an unprivileged guest may not ask). */
static void on_release(struct sfc *c, uint64_t now)
{
    if (!c->xs_rel)
        return;
    bool rel = false;
    char **w;
    for (int i = 0; i < MAX_REL_EVENTS && (w = xs_check_watch(c->xs_rel)) != NULL; i++) {
        rel = true;
        free(w);
    }
    if (!rel)
        return;
    if (c->ops->fence_news)
        c->ops->fence_news(c->cls);
    errno = 0;
    if (c->phase != SFC_DOWN && !xs_is_domain_introduced(c->xs_rel, c->x.be_id) && errno == 0)
        sfc_fault(c, SF_BACKEND_VANISHED, "driver domain %u is gone (@releaseDomain)", c->x.be_id);
    errno = 0;
    if (c->sb_phase != SFC_DOWN && !xs_is_domain_introduced(c->xs_rel, c->sx.be_id) && errno == 0) {
        sfc_log(c, SF_LOG_INFO, "standby domain %u is gone; its idle connection is dropped",
                c->sx.be_id);
        sb_retry_later(c, now);
    }
}

uint64_t sfc_generation(const struct sfc *c)
{
    return c->gen;
}

int sfc_domain_gone(const struct sfc *c, unsigned domid)
{
    if (!c->xs_rel)
        return -1;
    errno = 0;
    bool in = xs_is_domain_introduced(c->xs_rel, domid);
    return errno ? -1 : !in;
}

/* ---- the owner's loop ---- */

void sfc_pollfds(const struct sfc *c, struct pollfd *p)
{
    p[0] = (struct pollfd){.fd = c->x_open ? sfx_fd(&c->x) : -1, .events = POLLIN};
    p[1] = (struct pollfd){.fd = c->xs_rel ? xs_fileno(c->xs_rel) : -1, .events = POLLIN};
    p[2] = (struct pollfd){.fd = c->sx_open ? sfx_fd(&c->sx) : -1, .events = POLLIN};
}

void sfc_step(struct sfc *c, uint64_t now)
{
    if (switch_chore_due(c, now))
        switch_chore(c); /* one a turn, before anything this turn may write */
    unsigned ev = sfx_events(&c->x);
    /* The generation first: a promotion removes shadow/standby with it (in
     * its transaction, or the write after it), and the connection it names
     * is the one to switch to. */
    if (ev & (SFX_EV_GENERATION | SFX_EV_STANDBY))
        on_generation(c);
    if (c->phase == SFC_UP && (ev & SFX_EV_BACKEND))
        monitor_backend(c);
    if (ev & SFX_EV_STANDBY)
        on_standby(c);
    if (c->sx_open && (sfx_events(&c->sx) & SFX_EV_BACKEND))
        monitor_standby(c, now);
    if ((ev & SFX_EV_FENCED) && c->ops->fence_news)
        c->ops->fence_news(c->cls);
    on_release(c, now);
    if (c->phase != SFC_UP)
        drive_handshake(c, now);
    drive_standby(c, now);
}

int sfc_timeout(const struct sfc *c, uint64_t now, unsigned idle_ms)
{
    if (switch_chore_due(c, now))
        return 0; /* the next chore, once the class's turn is done */
    if (switch_chores_left(c)) {
        uint64_t due = c->switch_ms + CHORE_HOLD_MS;
        unsigned left = (unsigned)(due - now); /* not due: due > now */
        if (left < idle_ms)
            idle_ms = left;
    }
    if (c->phase != SFC_UP || (c->sx_open && c->sb_phase != SFC_UP && !c->sb_refused))
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
    char be[SFX_PATH_MAX], dir[SFX_PATH_MAX];
    unsigned id;
    /* After a promotion the device's connection is in a slot (a frontend
     * restarted there connects there). */
    if (sfx_peek_backend(&c->x, be, sizeof(be), &id) == 0) {
        link_dir_for(c, be, dir, sizeof(dir));
        sfx_set_link_dir(&c->x, dir);
    }
    if (sfx_read_backend(&c->x) < 0)
        sfc_log(c, SF_LOG_ERR, "cannot use %s/backend and backend-id (%m); waiting", c->device);
    set_fe_state(c, XenbusStateInitialising);
    on_standby(c);
}

void sfc_end(struct sfc *c)
{
    sb_drop(c, NULL);
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
    if (c->sx_closing)
        xs_close(c->sx_closing);
    c->sx_closing = NULL;
    if (c->sx_open)
        sfx_close(&c->sx);
    c->sx_open = false;
    if (c->x_open)
        sfx_close(&c->x);
    c->x_open = false;
}
