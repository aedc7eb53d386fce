/* sf_engine.c - the shadow frontend engine: handshake, detection, isolation,
 * reconnection and replay around a class (see sf_engine.h). */
#define _GNU_SOURCE
#include "sf_engine.h"

#include "sf_time.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <xen/io/xenbus.h>

#define TICK_MS          50u   /* response poll while requests are outstanding */
#define DOWN_TICK_MS     200u  /* handshake re-evaluation while not connected */
#define IDLE_TICK_MS     1000u /* a safety net for missed watch events */
#define SETUP_RETRY_MS   500u
#define MIN_HANDSHAKE_MS 5000u

enum hs_phase {
    HS_DOWN = 0, /* no transport */
    HS_SETUP,    /* transport published, waiting for the backend's Connected */
    HS_UP,
};

/* One caller request: its entries and the caller waiting for them. */
struct sf_req {
    struct sf_link link; /* inbox */
    struct sf_link entries;
    unsigned remaining;
    int err;
    bool done;
    pthread_cond_t cv;
};

struct sf_engine {
    const struct sf_class_ops *ops;
    void *cls;
    struct sf_engine_config cfg;
    char device[SFX_PATH_MAX];
    /* engine thread only */
    struct sfx x;
    bool x_open;
    struct sfj j;
    struct sf_recovery rec;
    enum hs_phase hs;
    uint64_t hs_since, hs_retry_at;
    uint64_t gen;
    uint64_t last_alive;
    struct sf_conn conn;
    bool connected_once, asked_close;
    unsigned replay_left;
    unsigned replay_total;     /* the replay set of the recovery in progress */
    uint64_t t_first_replayed; /* when its first entry completed (0: not yet) */
    uint64_t flush_backoff_until;
    bool stop_seen; /* the engine thread saw stopping */
    bool stop_flush_sent;
    uint64_t stop_deadline;
    /* shared, under mu */
    pthread_mutex_t mu;
    pthread_cond_t room_cv, state_cv;
    struct sf_link inbox;
    unsigned held;
    bool stopping;
    bool start_done;
    enum sf_state pub_state;
    uint64_t pub_recoveries;
    /* set up once */
    pthread_t thread;
    bool thread_started;
    int wake_fd;
};

/* ---- logging ---- */

static void vlog(struct sf_engine *eng, enum sf_log_level level, const char *fmt, va_list ap)
{
    if (!eng->cfg.log)
        return;
    char msg[768], line[SFX_PATH_MAX + sizeof(msg) + 4];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    snprintf(line, sizeof(line), "%s: %s", eng->device, msg);
    eng->cfg.log(level, line);
}

void sf_engine_log(struct sf_engine *eng, enum sf_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(eng, level, fmt, ap);
    va_end(ap);
}

/* ---- publishing ---- */

static void publish(struct sf_engine *eng, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void publish(struct sf_engine *eng, const char *key, const char *fmt, ...)
{
    char val[SF_REPORT_MAX + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof(val), fmt, ap);
    va_end(ap);
    if (sfx_write(&eng->x, key, "%s", val) < 0)
        sf_engine_log(eng, SF_LOG_ERR, "xenstore write %s/%s: %m", eng->device, key);
}

static void set_fe_state(struct sf_engine *eng, int state)
{
    if (sfx_set_state(&eng->x, state) < 0)
        sf_engine_log(eng, SF_LOG_ERR, "xenstore write %s/state (%s): %m", eng->device,
                      xsu_state_name(state));
}

static void set_pub_state(struct sf_engine *eng)
{
    pthread_mutex_lock(&eng->mu);
    eng->pub_state = eng->rec.state;
    eng->pub_recoveries = eng->rec.recoveries;
    if (eng->rec.state != SF_CONNECTING)
        eng->start_done = true;
    pthread_cond_broadcast(&eng->state_cv);
    pthread_cond_broadcast(&eng->room_cv);
    pthread_mutex_unlock(&eng->mu);
}

/* ---- completions ---- */

static void finish_req_entry(struct sf_engine *eng, struct sf_req *req, int status)
{
    pthread_mutex_lock(&eng->mu);
    if (status && !req->err)
        req->err = status;
    if (--req->remaining == 0) {
        req->done = true;
        eng->held--;
        pthread_cond_signal(&req->cv);
        pthread_cond_broadcast(&eng->room_cv);
    }
    pthread_mutex_unlock(&eng->mu);
}

static void done_tramp(void *arg, void *owner, struct sfj_entry *e, int status)
{
    struct sf_engine *eng = arg;
    if (e->replay && eng->rec.replaying && eng->replay_left) {
        eng->replay_left--;
        if (!eng->t_first_replayed)
            eng->t_first_replayed = sf_now_ms();
    }
    if (owner) {
        finish_req_entry(eng, owner, status);
        return;
    }
    if ((e->flags & SFJ_INTERNAL) && status) {
        sf_engine_log(eng, SF_LOG_ERR, "flush to bound retention failed (%s); retrying in 1 s",
                      strerror(status));
        eng->flush_backoff_until = sf_now_ms() + 1000u;
    }
}

static int issue_tramp(void *arg, struct sfj_entry *e, int *status)
{
    struct sf_engine *eng = arg;
    return eng->ops->issue(eng->cls, e, status);
}

static void split_tramp(void *arg, void *owner)
{
    struct sf_engine *eng = arg;
    if (!owner)
        return;
    struct sf_req *req = owner;
    pthread_mutex_lock(&eng->mu);
    req->remaining++;
    pthread_mutex_unlock(&eng->mu);
}

/* ---- faults, failure ---- */

static void teardown(struct sf_engine *eng)
{
    eng->ops->teardown(eng->cls, &eng->x);
    eng->hs = HS_DOWN;
}

static void fail_device(struct sf_engine *eng, const char *why)
{
    sfr_fail(&eng->rec);
    teardown(eng);
    uint64_t lost = sfj_fail_all(&eng->j, EIO, done_tramp, eng);
    set_fe_state(eng, XenbusStateClosed);
    publish(eng, USK_FE_STATE, "%s", USK_STATE_FAILED);
    sf_engine_log(eng, SF_LOG_ERR,
                  "FAILED: %s; every request fails with EIO from now on "
                  "(%" PRIu64 " bytes of acknowledged writes may not be durable)",
                  why, lost);
    set_pub_state(eng);
}

void sf_engine_fault(struct sf_engine *eng, enum sf_kind kind, const char *fmt, ...)
{
    if (eng->rec.state == SF_FAILED)
        return;
    char detail[SF_REPORT_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    uint64_t now = sf_now_ms(), evidence = eng->last_alive, oldest;
    if (sfj_oldest(&eng->j, &oldest, NULL) && oldest > evidence)
        evidence = oldest;
    teardown(eng);
    set_fe_state(eng, XenbusStateClosed);
    bool report = sfr_detect(&eng->rec, kind, detail, now, evidence);
    if (eng->rec.state == SF_CONNECTING) {
        sf_engine_log(eng, SF_LOG_ERR, "connecting to backend %s (domain %u): %s: %s; retrying",
                      eng->x.be, eng->x.be_id, sf_kind_name(kind), detail);
        return;
    }
    unsigned replay = sfj_requeue(&eng->j), held = eng->j.n_queue - replay;
    eng->replay_left = 0;
    if (report) {
        publish(eng, USK_FE_REPORT, "%s", eng->rec.report);
        publish(eng, USK_FE_STATE, "%s", USK_STATE_RECOVERING);
    }
    sf_engine_log(eng, SF_LOG_ERR,
                  "backend %s (domain %u) failed: %s: %s; recovering: %u requests to replay, "
                  "%u held (fault %u of this recovery)",
                  eng->x.be, eng->x.be_id, sf_kind_name(kind), detail, replay, held,
                  eng->rec.faults);
    set_pub_state(eng);
}

struct sfj_entry *sf_engine_check(struct sf_engine *eng, uint64_t id, unsigned op, int status)
{
    struct sfj_entry *e;
    enum sfv_verdict v = sfv_check(&eng->j, eng->ops->rules, eng->cls, id, op, status, &e);
    if (v == SFV_OK) {
        eng->last_alive = sf_now_ms();
        return e;
    }
    char d[128];
    sfv_describe(d, sizeof(d), v, id, op, status);
    sf_engine_fault(eng, SF_BAD_RESPONSE, "%s", d);
    return NULL;
}

void sf_engine_done(struct sf_engine *eng, struct sfj_entry *e, int status)
{
    sfj_complete(&eng->j, e, status, done_tramp, eng);
}

/* ---- the handshake ---- */

static unsigned handshake_ms(const struct sf_engine *eng)
{
    return eng->cfg.deadline_ms > MIN_HANDSHAKE_MS ? eng->cfg.deadline_ms : MIN_HANDSHAKE_MS;
}

static void finish_replay(struct sf_engine *eng, uint64_t now)
{
    sfr_replayed(&eng->rec, now);
    publish(eng, USK_FE_RECOVERIES, "%" PRIu64, eng->rec.recoveries);
    publish(eng, USK_FE_LAST_RECOVERY, "%s", eng->rec.last);
    publish(eng, USK_FE_STATE, "%s", USK_STATE_LIVE);
    sf_engine_log(eng, SF_LOG_INFO,
                  "recovered on backend %s (domain %u): %s; recovery %" PRIu64 ", %" PRIu64
                  " requests replayed so far",
                  eng->x.be, eng->x.be_id, eng->rec.last, eng->rec.recoveries, eng->j.replayed);
    /* For benchmarks: the pause an application sees is closer to this. */
    if (eng->replay_total && eng->t_first_replayed >= eng->rec.t_evidence)
        sf_engine_log(eng, SF_LOG_INFO,
                      "recovery %" PRIu64 ": first-replayed=%" PRIu64 " ms after the last sign of "
                      "life; replayed=%u",
                      eng->rec.recoveries, eng->t_first_replayed - eng->rec.t_evidence,
                      eng->replay_total);
    set_pub_state(eng);
}

static void connected(struct sf_engine *eng, uint64_t now)
{
    struct sf_conn c = {0};
    int r = eng->ops->connect(eng->cls, &eng->x, !eng->connected_once, &c);
    if (r == SF_CONN_MISMATCH) {
        fail_device(eng, "the new backend serves a different disk");
        return;
    }
    /* no_retain: the journal treats the cache as absent, flushes still go out. */
    if (r < 0 || sfj_set_conn(&eng->j, c.nslots, c.write_cache && !eng->cfg.no_retain) < 0 ||
        (c.max_data && sfj_split(&eng->j, c.max_data, split_tramp, eng) < 0)) {
        sf_engine_log(eng, SF_LOG_ERR, "backend %s (domain %u) connected but unusable; retrying",
                      eng->x.be, eng->x.be_id);
        teardown(eng);
        set_fe_state(eng, XenbusStateClosed);
        eng->hs_retry_at = now + SETUP_RETRY_MS;
        return;
    }
    set_fe_state(eng, XenbusStateConnected);
    eng->hs = HS_UP;
    eng->conn = c;
    eng->last_alive = now;
    if (eng->rec.state == SF_CONNECTING) {
        eng->connected_once = true;
        sfr_connected(&eng->rec, now);
        publish(eng, USK_FE_RECOVERIES, "%" PRIu64, eng->rec.recoveries);
        publish(eng, USK_FE_STATE, "%s", USK_STATE_LIVE);
        sf_engine_log(eng, SF_LOG_INFO, "connected to backend %s (domain %u): %u slots, %s",
                      eng->x.be, eng->x.be_id, c.nslots,
                      !c.write_cache       ? "write-through"
                      : eng->cfg.no_retain ? "write cache (flushes; retention off: shadow=off)"
                                           : "write cache (flushes, retention)");
        set_pub_state(eng);
        return;
    }
    sfr_connected(&eng->rec, now);
    eng->replay_left = eng->replay_total = sfj_replay_count(&eng->j);
    eng->t_first_replayed = 0;
    sf_engine_log(eng, SF_LOG_INFO,
                  "reconnected to backend %s (domain %u): %u slots, %s; replaying %u requests",
                  eng->x.be, eng->x.be_id, c.nslots,
                  c.write_cache ? "write cache (flushes, retention)" : "write-through",
                  eng->replay_left);
    if (!eng->replay_left)
        finish_replay(eng, now);
}

static void drive_handshake(struct sf_engine *eng, uint64_t now)
{
    if (eng->rec.state == SF_FAILED)
        return;
    if (!eng->x.be[0] && sfx_read_backend(&eng->x) < 0)
        return; /* the toolstack has not written the device dir yet */
    int st = sfx_backend_state(&eng->x);
    if (eng->hs == HS_DOWN) {
        if (st == XenbusStateInitWait) {
            if (now < eng->hs_retry_at)
                return;
            if (eng->ops->setup(eng->cls, &eng->x) < 0) {
                teardown(eng);
                eng->hs_retry_at = now + SETUP_RETRY_MS;
                return;
            }
            eng->hs = HS_SETUP;
            eng->hs_since = now;
            set_fe_state(eng, XenbusStateInitialised);
        } else if (st == XenbusStateClosed) {
            set_fe_state(eng, XenbusStateInitialising); /* ask it back to InitWait */
        } else if (st == XenbusStateConnected && eng->rec.state == SF_CONNECTING &&
                   !eng->asked_close) {
            sf_engine_log(eng, SF_LOG_INFO,
                          "backend %s is still Connected to an earlier frontend; closing",
                          eng->x.be);
            set_fe_state(eng, XenbusStateClosed);
            eng->asked_close = true;
        }
        return;
    }
    if (eng->hs != HS_SETUP)
        return;
    if (st == XenbusStateConnected) {
        connected(eng, now);
    } else if (st == XenbusStateInitWait || st == XenbusStateInitialised) {
        if (now - eng->hs_since > handshake_ms(eng)) {
            sf_engine_log(eng, SF_LOG_ERR,
                          "backend %s (domain %u) did not connect within %u ms; retrying",
                          eng->x.be, eng->x.be_id, handshake_ms(eng));
            teardown(eng);
            set_fe_state(eng, XenbusStateClosed);
        }
    } else {
        sf_engine_log(eng, SF_LOG_INFO, "backend %s went %s during the handshake; retrying",
                      eng->x.be, st < 0 ? "away" : xsu_state_name(st));
        teardown(eng);
    }
}

/* The backend dir changed while connected. */
static void monitor_backend(struct sf_engine *eng)
{
    int st = sfx_backend_state(&eng->x);
    if (st == XenbusStateConnected)
        return;
    if (st < 0 && errno == ENOENT)
        sf_engine_fault(eng, SF_BACKEND_VANISHED, "backend dir %s is gone", eng->x.be);
    else if (st < 0)
        sf_engine_fault(eng, SF_BACKEND_VANISHED, "backend state %s/state unreadable: %s",
                        eng->x.be, strerror(errno));
    else if (st == XenbusStateClosing || st == XenbusStateClosed)
        sf_engine_fault(eng, SF_BACKEND_CLOSED, "backend went %s unasked", xsu_state_name(st));
    else
        sf_engine_fault(eng, SF_BACKEND_RESTARTED, "backend went back to %s", xsu_state_name(st));
}

static void on_generation(struct sf_engine *eng)
{
    uint64_t g;
    if (sfx_read_generation(&eng->x, &g) < 0) {
        sf_engine_log(eng, SF_LOG_ERR, "xenstore read %s/%s: %m", eng->device, USK_FE_GENERATION);
        return;
    }
    if (g <= eng->gen)
        return;
    eng->gen = g;
    if (sfx_read_backend(&eng->x) < 0) {
        sf_engine_log(eng, SF_LOG_ERR,
                      "generation %" PRIu64 ": cannot use %s/backend and backend-id: %m", g,
                      eng->device);
        return;
    }
    sf_engine_log(eng, SF_LOG_INFO, "generation %" PRIu64 ": backend is now %s (domain %u)", g,
                  eng->x.be, eng->x.be_id);
    if (eng->hs == HS_UP) {
        sf_engine_fault(eng, SF_BACKEND_RESTARTED,
                        "rewired by the toolstack to %s (generation %" PRIu64 ")", eng->x.be, g);
    } else if (eng->hs == HS_SETUP) {
        teardown(eng);
    }
    if (eng->rec.state != SF_FAILED) {
        /* A fresh backend: tell it at once we are starting over. */
        set_fe_state(eng, XenbusStateInitialising);
        eng->hs_retry_at = 0;
    }
}

/* ---- requests ---- */

static void drain_inbox(struct sf_engine *eng)
{
    struct sf_link in;
    sf_list_init(&in);
    pthread_mutex_lock(&eng->mu);
    if (!sf_list_empty(&eng->inbox)) {
        in = eng->inbox;
        in.next->prev = &in;
        in.prev->next = &in;
        sf_list_init(&eng->inbox);
    }
    pthread_mutex_unlock(&eng->mu);
    bool refuse = eng->rec.state == SF_FAILED || eng->stop_seen, added = false;
    while (!sf_list_empty(&in)) {
        struct sf_req *req = SF_CONTAINER(in.next, struct sf_req, link);
        sf_list_del(&req->link);
        while (!sf_list_empty(&req->entries)) {
            struct sfj_entry *e = SF_CONTAINER(req->entries.next, struct sfj_entry, q);
            sf_list_del(&e->q);
            e->owner = req;
            if (!refuse) {
                sfj_submit(&eng->j, e);
                added = true;
                continue;
            }
            /* The request may be gone once its last entry finishes. */
            bool last = sf_list_empty(&req->entries);
            sfj_entry_free(e);
            finish_req_entry(eng, req, eng->stop_seen ? ESHUTDOWN : EIO);
            if (last)
                break;
        }
    }
    /* Entries cut for an earlier connection may be too long for this one. */
    if (added && eng->hs == HS_UP && eng->conn.max_data &&
        sfj_split(&eng->j, eng->conn.max_data, split_tramp, eng) < 0)
        sf_engine_log(eng, SF_LOG_ERR, "split requests: %m");
}

static void dispatch(struct sf_engine *eng, uint64_t now)
{
    unsigned n = 0;
    for (int round = 0; round < 2 && eng->hs == HS_UP; round++) {
        n += sfj_dispatch(&eng->j, now, issue_tramp, done_tramp, eng);
        if (!sfj_wants_flush(&eng->j) || now < eng->flush_backoff_until)
            break;
        struct sfj_entry *f = sfj_entry_new(SFJ_FLUSH | SFJ_INTERNAL, eng->ops->flush_op, 0, 0);
        if (!f)
            break;
        sfj_insert_flush(&eng->j, f);
        sf_engine_log(eng, SF_LOG_DEBUG,
                      "retention bound: %" PRIu64 " bytes held (%" PRIu64 " retained): flushing",
                      eng->j.retained_bytes + eng->j.inflight_mod_bytes, eng->j.retained_bytes);
    }
    if (n)
        eng->ops->kick(eng->cls);
}

static void check_deadline(struct sf_engine *eng, uint64_t now)
{
    uint64_t oldest;
    const struct sfj_entry *e;
    if (!sfj_oldest(&eng->j, &oldest, &e) || now - oldest < eng->cfg.deadline_ms)
        return;
    char d[96] = "";
    eng->ops->describe(eng->cls, e, d, sizeof(d));
    sf_engine_fault(eng, SF_TIMEOUT, "%s outstanding for %" PRIu64 " ms (deadline %u ms)", d,
                    now - oldest, eng->cfg.deadline_ms);
}

static int poll_timeout(struct sf_engine *eng, uint64_t now)
{
    if (eng->stop_seen)
        return (int)TICK_MS;
    if (eng->hs != HS_UP)
        return (int)DOWN_TICK_MS;
    uint64_t oldest;
    if (!sfj_oldest(&eng->j, &oldest, NULL))
        return (int)IDLE_TICK_MS;
    uint64_t due = oldest + eng->cfg.deadline_ms;
    uint64_t left = due > now ? due - now : 0;
    return (int)(left < TICK_MS ? left : TICK_MS);
}

/* While stopping: flush what is retained, within one deadline. */
static bool stop_ready(struct sf_engine *eng, uint64_t now)
{
    if (eng->hs != HS_UP)
        return true;
    if (!eng->stop_flush_sent) {
        eng->stop_flush_sent = true;
        eng->stop_deadline = now + eng->cfg.deadline_ms;
        if (eng->j.n_retained) {
            struct sfj_entry *f = sfj_entry_new(SFJ_FLUSH | SFJ_INTERNAL, eng->ops->flush_op, 0, 0);
            if (f)
                sfj_insert_flush(&eng->j, f);
        }
    }
    return eng->j.n_queue == 0 || now >= eng->stop_deadline;
}

static void *engine_main(void *arg)
{
    struct sf_engine *eng = arg;
    if (sfx_read_generation(&eng->x, &eng->gen) < 0)
        eng->gen = 0;
    if (sfx_read_backend(&eng->x) < 0)
        sf_engine_log(eng, SF_LOG_ERR, "cannot use %s/backend and backend-id (%m); waiting",
                      eng->device);
    set_fe_state(eng, XenbusStateInitialising);
    for (;;) {
        struct pollfd p[3] = {{.fd = eng->wake_fd, .events = POLLIN},
                              {.fd = sfx_fd(&eng->x), .events = POLLIN},
                              {.fd = -1, .events = POLLIN}};
        int cfd = eng->hs == HS_UP ? eng->ops->fd(eng->cls) : -1;
        p[2].fd = cfd;
        if (poll(p, 3, poll_timeout(eng, sf_now_ms())) < 0 && errno != EINTR) {
            sf_engine_log(eng, SF_LOG_ERR, "poll: %m");
            usleep(10000);
        }
        if (p[0].revents & POLLIN) {
            uint64_t v;
            if (read(eng->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
                sf_engine_log(eng, SF_LOG_ERR, "read eventfd: %m");
        }
        uint64_t now = sf_now_ms();
        pthread_mutex_lock(&eng->mu);
        eng->stop_seen = eng->stopping;
        pthread_mutex_unlock(&eng->mu);
        drain_inbox(eng);
        unsigned ev = sfx_events(&eng->x);
        if (ev & SFX_EV_GENERATION)
            on_generation(eng);
        if (eng->hs == HS_UP && (ev & SFX_EV_BACKEND))
            monitor_backend(eng);
        if (eng->hs != HS_UP)
            drive_handshake(eng, now);
        if (eng->hs == HS_UP)
            eng->ops->harvest(eng->cls, eng, cfd >= 0 && (p[2].revents & POLLIN));
        now = sf_now_ms();
        if (eng->hs == HS_UP)
            check_deadline(eng, now);
        if (eng->rec.replaying && eng->replay_left == 0)
            finish_replay(eng, now);
        if (eng->hs == HS_UP)
            dispatch(eng, now);
        if (eng->stop_seen && stop_ready(eng, now))
            break;
    }
    drain_inbox(eng);
    if (eng->j.n_retained || eng->j.n_queue)
        sf_engine_log(eng, SF_LOG_ERR,
                      "stopping with %u requests outstanding and %" PRIu64
                      " bytes of unflushed writes",
                      eng->j.n_queue, eng->j.retained_bytes);
    sfj_fail_all(&eng->j, ESHUTDOWN, done_tramp, eng);
    teardown(eng);
    set_fe_state(eng, XenbusStateClosed);
    return NULL;
}

/* ---- the API ---- */

int sf_engine_new(const struct sf_class_ops *ops, void *cls, const struct sf_engine_config *cfg,
                  struct sf_engine **out)
{
    if (!cfg->device || !cfg->deadline_ms || !cfg->max_held) {
        errno = EINVAL;
        return -1;
    }
    struct sf_engine *eng = calloc(1, sizeof(*eng));
    if (!eng)
        return -1;
    eng->ops = ops;
    eng->cls = cls;
    eng->cfg = *cfg;
    snprintf(eng->device, sizeof(eng->device), "%s", cfg->device);
    eng->cfg.device = eng->device;
    eng->wake_fd = -1;
    sfj_init(&eng->j, cfg->max_retained);
    sfr_init(&eng->rec);
    sf_list_init(&eng->inbox);
    pthread_mutex_init(&eng->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&eng->room_cv, NULL);
    pthread_cond_init(&eng->state_cv, &ca);
    pthread_condattr_destroy(&ca);
    eng->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (eng->wake_fd < 0) {
        int e = errno;
        sf_engine_free(eng);
        errno = e;
        return -1;
    }
    *out = eng;
    return 0;
}

int sf_engine_start(struct sf_engine *eng)
{
    if (sfx_open(&eng->x, eng->device) < 0) {
        sf_engine_log(eng, SF_LOG_ERR, "xenstore: open and watch %s/%s: %m", eng->device,
                      USK_FE_GENERATION);
        return -1;
    }
    eng->x_open = true;
    int err = pthread_create(&eng->thread, NULL, engine_main, eng);
    if (err) {
        errno = err;
        return -1;
    }
    eng->thread_started = true;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += eng->cfg.connect_timeout_ms / 1000u;
    until.tv_nsec += (long)(eng->cfg.connect_timeout_ms % 1000u) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&eng->mu);
    int r = 0;
    while (!eng->start_done && r == 0) {
        if (eng->cfg.connect_timeout_ms)
            r = pthread_cond_timedwait(&eng->state_cv, &eng->mu, &until);
        else
            r = pthread_cond_wait(&eng->state_cv, &eng->mu);
    }
    enum sf_state st = eng->pub_state;
    bool ok = eng->start_done;
    pthread_mutex_unlock(&eng->mu);
    if (!ok) {
        errno = ETIMEDOUT;
        return -1;
    }
    if (st == SF_FAILED) {
        errno = EIO;
        return -1;
    }
    return 0;
}

static void wake(struct sf_engine *eng)
{
    uint64_t one = 1;
    if (write(eng->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        sf_engine_log(eng, SF_LOG_ERR, "write eventfd: %m");
}

void sf_engine_free(struct sf_engine *eng)
{
    if (!eng)
        return;
    if (eng->thread_started) {
        pthread_mutex_lock(&eng->mu);
        eng->stopping = true;
        pthread_cond_broadcast(&eng->room_cv);
        pthread_mutex_unlock(&eng->mu);
        wake(eng);
        pthread_join(eng->thread, NULL);
    }
    sfj_fini(&eng->j);
    if (eng->x_open)
        sfx_close(&eng->x);
    if (eng->wake_fd >= 0)
        close(eng->wake_fd);
    pthread_cond_destroy(&eng->room_cv);
    pthread_cond_destroy(&eng->state_cv);
    pthread_mutex_destroy(&eng->mu);
    free(eng);
}

int sf_engine_run(struct sf_engine *eng, struct sf_link *list)
{
    unsigned n = 0;
    for (struct sf_link *l = list->next; l != list; l = l->next)
        n++;
    if (!n)
        return 0;
    struct sf_req req = {.remaining = n};
    sf_list_init(&req.link);
    sf_list_init(&req.entries);
    pthread_cond_init(&req.cv, NULL);
    pthread_mutex_lock(&eng->mu);
    while (eng->held >= eng->cfg.max_held && !eng->stopping && eng->pub_state != SF_FAILED)
        pthread_cond_wait(&eng->room_cv, &eng->mu);
    if (eng->stopping || eng->pub_state == SF_FAILED) {
        int err = eng->stopping ? ESHUTDOWN : EIO;
        pthread_mutex_unlock(&eng->mu);
        while (!sf_list_empty(list)) {
            struct sfj_entry *e = SF_CONTAINER(list->next, struct sfj_entry, q);
            sf_list_del(&e->q);
            sfj_entry_free(e);
        }
        pthread_cond_destroy(&req.cv);
        return err;
    }
    eng->held++;
    /* Move the entries onto the request, keeping their order. */
    req.entries.next = list->next;
    req.entries.prev = list->prev;
    req.entries.next->prev = &req.entries;
    req.entries.prev->next = &req.entries;
    sf_list_init(list);
    sf_list_append(&eng->inbox, &req.link);
    pthread_mutex_unlock(&eng->mu);
    wake(eng);
    pthread_mutex_lock(&eng->mu);
    while (!req.done)
        pthread_cond_wait(&req.cv, &eng->mu);
    pthread_mutex_unlock(&eng->mu);
    pthread_cond_destroy(&req.cv);
    return req.err;
}

enum sf_state sf_engine_state(struct sf_engine *eng)
{
    pthread_mutex_lock(&eng->mu);
    enum sf_state s = eng->pub_state;
    pthread_mutex_unlock(&eng->mu);
    return s;
}

uint64_t sf_engine_recoveries(struct sf_engine *eng)
{
    pthread_mutex_lock(&eng->mu);
    uint64_t r = eng->pub_recoveries;
    pthread_mutex_unlock(&eng->mu);
    return r;
}
