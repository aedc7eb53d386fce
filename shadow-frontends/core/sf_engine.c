/* sf_engine.c - the journal-based engine (see sf_engine.h): callers'
 * requests in, journal entries dispatched to the class, responses validated
 * and retired, replay after a recovery; the connection itself is sf_conn's. */
#define _GNU_SOURCE
#include "sf_engine.h"

#include "sf_fence.h"
#include "sf_time.h"
#include "understudy-keys.h"

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

#define IDLE_TICK_MS 1000u /* a safety net for missed watch events */
#define STOP_TICK_MS 50u
#define RSP_BATCH    32u    /* responses taken from the class at a time */
#define FENCE_LOG_MS 10000u /* while requests are held for the fence: a line this often */

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
    struct sfc c;            /* the connection driver */
    struct sfc_ops conn_ops; /* engine_conn_ops, with the standby's if the class has them */
    struct sfj j;
    struct sf_conn_info conn;
    struct sf_conn_info sb_conn; /* the hot standby's, from its connect */
    bool sb_ready;               /* sb_conn holds a connected standby's */
    /* Bumped whenever the class's transport changes (set up, torn down,
     * promoted): an fd polled before it is not the transport's any more. */
    unsigned transport_epoch;
    struct sf_rsp batch[RSP_BATCH];
    unsigned replay_left;
    uint64_t refused_down;     /* restart only: requests failed while there was no backend */
    unsigned replay_total;     /* the replay set of the recovery in progress */
    uint64_t t_first_replayed; /* when its first entry completed (0: not yet) */
    uint64_t flush_backoff_until;
    /* What failed backends may still write (sf_fence.h), the generation the
     * live backend was connected at, and the hold's log. */
    struct sf_fence fence;
    uint64_t served_gen;
    bool fence_logged;
    uint64_t fence_next_log;
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

static void log_sink(void *arg, enum sf_log_level level, const char *msg)
{
    struct sf_engine *eng = arg;
    if (!eng->cfg.log)
        return;
    char line[SFX_PATH_MAX + 768 + 4];
    snprintf(line, sizeof(line), "%s: %s", eng->device, msg);
    eng->cfg.log(level, line);
}

void sf_engine_log(struct sf_engine *eng, enum sf_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sf_vlogf(log_sink, eng, level, fmt, ap);
    va_end(ap);
}

static void set_pub_state(struct sf_engine *eng)
{
    pthread_mutex_lock(&eng->mu);
    eng->pub_state = eng->c.rec.state;
    eng->pub_recoveries = eng->c.rec.recoveries;
    if (eng->c.rec.state != SF_CONNECTING)
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
    if (e->replay && eng->c.rec.replaying && eng->replay_left) {
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

/* ---- the fence: what failed backends may still write (sf_fence.h) ---- */

static bool fence_hold(void *arg, const struct sfj_entry *e)
{
    struct sf_engine *eng = arg;
    return !sff_empty(&eng->fence) && sff_holds(&eng->fence, e->start, e->len);
}

static void fence_add(void *arg, const struct sfj_entry *e)
{
    struct sf_engine *eng = arg;
    sff_add(&eng->fence, eng->c.x.be_id, eng->served_gen, e->start, e->len);
}

/* The generation FE/shadow/fenced must reach to release every set. */
static uint64_t fence_needed(const struct sf_engine *eng)
{
    uint64_t g = 0;
    for (unsigned i = 0; i < eng->fence.n; i++)
        if (eng->fence.s[i].gen > g)
            g = eng->fence.s[i].gen;
    return g + 1;
}

/* Something was released (how says what). */
static void fence_note(struct sf_engine *eng, const char *how)
{
    if (!sff_empty(&eng->fence)) {
        sf_engine_log(eng, SF_LOG_INFO, "fence: %s; %u failed domains still to be fenced", how,
                      eng->fence.n);
        return;
    }
    if (eng->fence_logged) {
        uint64_t now = sf_now_ms(), t = eng->j.held_oldest;
        sf_engine_log(eng, SF_LOG_INFO,
                      "fence: %s: every failed backend is fenced; held requests go now: %u "
                      "(held up to %" PRIu64 " ms)",
                      how, eng->j.held, t && now > t ? now - t : 0);
    } else {
        sf_engine_log(eng, SF_LOG_DEBUG, "fence: %s: every failed backend is fenced", how);
    }
    eng->fence_logged = false;
}

/* FE/shadow/fenced may have moved, or a failed domain gone: release what
 * is fenced now. */
static void fence_check(struct sf_engine *eng)
{
    if (sff_empty(&eng->fence))
        return;
    char how[192] = "";
    size_t n = 0;
    uint64_t g;
    if (sfx_read_fenced(&eng->c.x, &g) < 0)
        sf_engine_log(eng, SF_LOG_ERR, "xenstore read %s/%s: %m; taken as 0", eng->device,
                      USK_FE_FENCED);
    else if (sff_release_fenced(&eng->fence, g))
        n = (size_t)snprintf(how, sizeof(how), "%s=%" PRIu64, USK_FE_FENCED, g);
    /* Each turn releases a set or moves on: at most SFF_DOMS turns. */
    for (unsigned i = 0; i < eng->fence.n;) {
        unsigned d = eng->fence.s[i].domid;
        if (eng->fence.s[i].several || sfc_domain_gone(&eng->c, d) != 1 ||
            !sff_release_domain(&eng->fence, d)) {
            i++;
            continue;
        }
        if (n < sizeof(how))
            n +=
                (size_t)snprintf(how + n, sizeof(how) - n, "%sdomain %u is gone", n ? ", " : "", d);
    }
    if (how[0])
        fence_note(eng, how);
}

/* Connected after a fault: a backend in a failed domain again holds
 * nothing of it (its old process is dead, its kernel orders its own page
 * cache); for any other, what is not fenced yet is held from now on. */
static void fence_connected(struct sf_engine *eng)
{
    unsigned d = eng->c.x.be_id;
    char how[96];
    if (sff_release_domain(&eng->fence, d)) {
        snprintf(how, sizeof(how), "reconnected to domain %u, the failed backend's own", d);
        fence_note(eng, how);
    }
    fence_check(eng);
}

/* While requests are held: a line when the hold starts and every
 * FENCE_LOG_MS, and then a look at the key and the domains again (a safety
 * net for a missed watch event). */
static void fence_log(struct sf_engine *eng, uint64_t now)
{
    if (sff_empty(&eng->fence) || !eng->j.held)
        return;
    uint64_t t = eng->j.held_oldest, age = t && now > t ? now - t : 0;
    if (!eng->fence_logged) {
        char doms[64] = "";
        size_t n = 0;
        for (unsigned i = 0; i < eng->fence.n && n < sizeof(doms); i++)
            n += (size_t)snprintf(doms + n, sizeof(doms) - n, "%s%u%s", i ? ", " : "",
                                  eng->fence.s[i].domid, eng->fence.s[i].several ? "+" : "");
        sf_engine_log(eng, SF_LOG_INFO,
                      "fence: requests held: %u (writes over what failed domain %s may still "
                      "write, %" PRIu64 " KiB in all, and what waits behind them) until %s "
                      "reaches %" PRIu64 " or the domain is gone",
                      eng->j.held, doms, sff_bytes(&eng->fence) >> 10, USK_FE_FENCED,
                      fence_needed(eng));
        eng->fence_logged = true;
        eng->fence_next_log = now + FENCE_LOG_MS;
        return;
    }
    if (now < eng->fence_next_log)
        return;
    eng->fence_next_log = now + FENCE_LOG_MS;
    sf_engine_log(eng, SF_LOG_INFO,
                  "fence: requests still held: %u, the oldest for %" PRIu64 " ms; waiting for %s "
                  "to reach %" PRIu64,
                  eng->j.held, age, USK_FE_FENCED, fence_needed(eng));
    fence_check(eng);
}

/* ---- the engine as a class of the connection driver ---- */

static int conn_setup(void *arg, struct sfx *x, char *why, size_t len)
{
    struct sf_engine *eng = arg;
    (void)why;
    (void)len;
    eng->transport_epoch++;
    return eng->ops->setup(eng->cls, x) < 0 ? -1 : 0;
}

static const char *cache_word(const struct sf_engine *eng, bool first)
{
    if (!eng->conn.write_cache)
        return "write-through";
    if (eng->cfg.restart_only)
        return "write cache (flushes; restart only: nothing retained)";
    if (first && eng->cfg.no_retain)
        return "write cache (flushes; retention off: shadow=off)";
    return "write cache (flushes, retention)";
}

/* A connection's limits into the journal; after a recovery, its replay set
 * counted. The same for a handshake and a promotion. */
static int adopt(struct sf_engine *eng, const struct sf_conn_info *c, bool first, char *what,
                 size_t len)
{
    /* no_retain: the journal treats the cache as absent, flushes still go out. */
    if (sfj_set_conn(&eng->j, c->nslots, c->write_cache && !eng->cfg.no_retain) < 0 ||
        (c->max_data && sfj_split(&eng->j, c->max_data, split_tramp, eng) < 0))
        return -1;
    eng->conn = *c;
    eng->served_gen = sfc_generation(&eng->c);
    if (first) {
        snprintf(what, len, "%u slots, %s", c->nslots, cache_word(eng, true));
        return 0;
    }
    fence_connected(eng);
    eng->replay_left = eng->replay_total = sfj_replay_count(&eng->j);
    eng->t_first_replayed = 0;
    if (eng->cfg.restart_only)
        snprintf(what, len, "%u slots, %s; restart only: nothing replayed", c->nslots,
                 cache_word(eng, false));
    else
        snprintf(what, len, "%u slots, %s; replaying %u requests", c->nslots,
                 cache_word(eng, false), eng->replay_left);
    return 0;
}

static int conn_connect(void *arg, struct sfx *x, bool first, char *what, size_t len)
{
    struct sf_engine *eng = arg;
    struct sf_conn_info c = {0};
    int r = eng->ops->connect(eng->cls, x, first, &c);
    if (r == SF_CONN_MISMATCH) {
        snprintf(what, len, "the new backend serves a different disk");
        return SFC_MISMATCH;
    }
    return r < 0 ? -1 : adopt(eng, &c, first, what, len);
}

static void conn_teardown(void *arg, struct sfx *x)
{
    struct sf_engine *eng = arg;
    eng->transport_epoch++;
    eng->ops->teardown(eng->cls, x);
}

/* In-flight entries go back to pending, retained ones to the head. */
static void conn_isolate(void *arg, char *held, size_t len)
{
    struct sf_engine *eng = arg;
    unsigned inflight = eng->j.n_inflight, retained = eng->j.n_retained;
    /* What the failed backend may still write is fenced off first (the
     * restart-only mode replays nothing, so it holds nothing either). */
    if (!eng->cfg.restart_only)
        sfj_visit_exposed(&eng->j, fence_add, eng);
    unsigned replay = sfj_requeue(&eng->j);
    eng->replay_left = 0;
    if (eng->cfg.restart_only) {
        /* As a stock driver: what the dead backend had is lost to the caller. */
        unsigned n = eng->j.n_queue;
        sfj_fail_all(&eng->j, EIO, done_tramp, eng);
        snprintf(held, len, "restart only: %u requests failed with EIO", n);
        return;
    }
    snprintf(held, len,
             "%u requests to replay (%u in flight, %u acknowledged and retained), %u held", replay,
             inflight, retained, eng->j.n_queue - replay);
}

static void conn_fail(void *arg, char *what, size_t len)
{
    struct sf_engine *eng = arg;
    uint64_t lost = sfj_fail_all(&eng->j, EIO, done_tramp, eng);
    snprintf(what, len,
             "every request fails with EIO from now on "
             "(%" PRIu64 " bytes of acknowledged writes may not be durable)",
             lost);
}

static bool conn_oldest(void *arg, uint64_t *since)
{
    struct sf_engine *eng = arg;
    return sfj_oldest(&eng->j, since, NULL);
}

static void conn_state_changed(void *arg)
{
    set_pub_state(arg);
}

static void conn_fence_news(void *arg)
{
    fence_check(arg);
}

/* ---- the hot standby's transport: the class's, its limits kept here ---- */

static int conn_standby_setup(void *arg, struct sfx *sx, char *why, size_t len)
{
    struct sf_engine *eng = arg;
    (void)why;
    (void)len;
    eng->sb_ready = false;
    return eng->ops->standby_setup(eng->cls, sx) < 0 ? -1 : 0;
}

static int conn_standby_connect(void *arg, struct sfx *sx, char *what, size_t len)
{
    struct sf_engine *eng = arg;
    struct sf_conn_info c = {0};
    int r = eng->ops->standby_connect(eng->cls, sx, &c);
    if (r == SF_CONN_MISMATCH) {
        snprintf(what, len, "it serves a different disk");
        return SFC_MISMATCH;
    }
    if (r < 0 || !c.nslots)
        return -1;
    eng->sb_conn = c;
    eng->sb_ready = true;
    snprintf(what, len, "%u slots, %s; nothing issued until it is promoted", c.nslots,
             c.write_cache ? "write cache" : "write-through");
    return 0;
}

static void conn_standby_teardown(void *arg, struct sfx *sx)
{
    struct sf_engine *eng = arg;
    eng->sb_ready = false;
    eng->ops->standby_teardown(eng->cls, sx);
}

/* As after a reconnect: the standby's limits, then the replay (isolate put
 * the replay set back to pending at the fault). */
static int conn_promote(void *arg, struct sfx *x, char *what, size_t len)
{
    struct sf_engine *eng = arg;
    bool ready = eng->sb_ready;
    eng->sb_ready = false;
    eng->transport_epoch++;
    if (!ready || eng->ops->promote(eng->cls) < 0) {
        /* The driver handshakes afresh in the slot: nothing of it stays. */
        eng->ops->standby_teardown(eng->cls, x);
        return -1;
    }
    return adopt(eng, &eng->sb_conn, false, what, len);
}

static void conn_forget(void *arg, struct sfx *x)
{
    struct sf_engine *eng = arg;
    eng->ops->forget(eng->cls, x);
}

static const struct sfc_ops engine_conn_ops = {
    .setup_state = XenbusStateInitialised,
    .setup = conn_setup,
    .connect = conn_connect,
    .teardown = conn_teardown,
    .isolate = conn_isolate,
    .fail = conn_fail,
    .oldest = conn_oldest,
    .state_changed = conn_state_changed,
    .fence_news = conn_fence_news,
};

/* ---- responses ---- */

/* Take what the class copied out of its ring, check each response against
 * the journal, retire it. Every batch retires at least one outstanding
 * entry (or ends in a fault), so there are at most nslots + 1 rounds. */
static void harvest(struct sf_engine *eng, bool event)
{
    char why[160];
    for (unsigned round = 0; round <= eng->conn.nslots && eng->c.phase == SFC_UP; round++) {
        int n = eng->ops->harvest(eng->cls, event && round == 0, eng->batch, RSP_BATCH, why,
                                  sizeof(why));
        if (n < 0) {
            sfc_fault(&eng->c, SF_BAD_RESPONSE, "%s", why);
            return;
        }
        if (n == 0)
            return;
        for (int i = 0; i < n; i++) {
            const struct sf_rsp *r = &eng->batch[i];
            struct sfj_entry *e;
            enum sfv_verdict v =
                sfv_check(&eng->j, eng->ops->rules, eng->cls, r->id, r->op, r->status, &e);
            if (v != SFV_OK) {
                char d[128];
                sfv_describe(d, sizeof(d), v, r->id, r->op, r->status);
                sfc_fault(&eng->c, SF_BAD_RESPONSE, "%s", d);
                return; /* the transport is gone: the rest of the batch with it */
            }
            sfc_alive(&eng->c, sf_now_ms());
            int err = eng->ops->complete(eng->cls, e, r->status);
            sfj_complete(&eng->j, e, err, done_tramp, eng);
        }
    }
}

/* The replay is done when what remains of it waits for the fence (the
 * held writes, and reads and flushes behind them): the device serves. */
static bool replay_done(const struct sf_engine *eng)
{
    return eng->replay_left == 0 ||
           (eng->c.phase == SFC_UP && eng->replay_left <= eng->j.held_replay);
}

static void finish_replay(struct sf_engine *eng, uint64_t now)
{
    char extra[128];
    int n =
        snprintf(extra, sizeof(extra), ", %" PRIu64 " requests replayed so far", eng->j.replayed);
    if (eng->replay_left && n > 0 && (size_t)n < sizeof(extra))
        snprintf(extra + n, sizeof(extra) - (size_t)n,
                 "; waiting for the failed backend to be fenced: %u", eng->replay_left);
    sfc_replayed(&eng->c, now, extra);
    if (eng->cfg.restart_only && eng->refused_down) {
        sf_engine_log(eng, SF_LOG_ERR,
                      "restart only: %" PRIu64 " requests made while there was no backend failed "
                      "with EIO",
                      eng->refused_down);
        eng->refused_down = 0;
    }
    /* For benchmarks: the pause an application sees is closer to this. */
    const struct sf_recovery *rec = &eng->c.rec;
    if (eng->replay_total && eng->t_first_replayed >= rec->t_evidence)
        sf_engine_log(eng, SF_LOG_INFO,
                      "recovery %" PRIu64 ": first-replayed=%" PRIu64 " ms after the last sign of "
                      "life; replayed=%u",
                      rec->recoveries, eng->t_first_replayed - rec->t_evidence, eng->replay_total);
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
    /* Restart only: no backend, no request (a recovery's replay phase has a
     * backend, and nothing to replay). */
    bool down =
        eng->cfg.restart_only && eng->c.rec.state == SF_RECOVERING && eng->c.phase != SFC_UP;
    bool refuse = eng->c.rec.state == SF_FAILED || eng->stop_seen || down, added = false;
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
            if (down && last)
                eng->refused_down++;
            sfj_entry_free(e);
            finish_req_entry(eng, req, eng->stop_seen ? ESHUTDOWN : EIO);
            if (last)
                break;
        }
    }
    /* Entries cut for an earlier connection may be too long for this one. */
    if (added && eng->c.phase == SFC_UP && eng->conn.max_data &&
        sfj_split(&eng->j, eng->conn.max_data, split_tramp, eng) < 0)
        sf_engine_log(eng, SF_LOG_ERR, "split requests: %m");
}

static void dispatch(struct sf_engine *eng, uint64_t now)
{
    unsigned n = 0;
    for (int round = 0; round < 2 && eng->c.phase == SFC_UP; round++) {
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
    uint64_t age;
    const struct sfj_entry *e;
    uint64_t oldest;
    if (!sfc_overdue(&eng->c, now, &age) || !sfj_oldest(&eng->j, &oldest, &e))
        return;
    char d[96] = "";
    eng->ops->describe(eng->cls, e, d, sizeof(d));
    sfc_fault(&eng->c, SF_TIMEOUT, "%s outstanding for %" PRIu64 " ms (deadline %u ms)", d, age,
              eng->cfg.deadline_ms);
}

/* While stopping: flush what is retained, within one deadline. */
static bool stop_ready(struct sf_engine *eng, uint64_t now)
{
    if (eng->c.phase != SFC_UP)
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
    bool busy = false; /* the class has background work left */
    sfc_begin(&eng->c);
    for (;;) {
        struct pollfd p[2 + SFC_NFDS] = {{.fd = eng->wake_fd, .events = POLLIN},
                                         {.fd = -1, .events = POLLIN}};
        /* Asked each turn: after a promotion it is the new transport's. */
        int cfd = eng->c.phase == SFC_UP ? eng->ops->fd(eng->cls) : -1;
        unsigned epoch = eng->transport_epoch;
        p[1].fd = cfd;
        sfc_pollfds(&eng->c, &p[2]);
        int timeout =
            eng->stop_seen ? (int)STOP_TICK_MS : sfc_timeout(&eng->c, sf_now_ms(), IDLE_TICK_MS);
        if (busy)
            timeout = 0;
        if (poll(p, 2 + SFC_NFDS, timeout) < 0 && errno != EINTR) {
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
        sfc_step(&eng->c, now);
        /* A readable fd of a transport the step replaced says nothing of the
         * live one (and acknowledging its event would wait for one). */
        bool event = cfd >= 0 && (p[1].revents & POLLIN) && epoch == eng->transport_epoch;
        if (eng->c.phase == SFC_UP)
            harvest(eng, event);
        now = sf_now_ms();
        check_deadline(eng, now);
        if (eng->c.phase == SFC_UP)
            dispatch(eng, now);
        fence_log(eng, now);
        if (sfc_replaying(&eng->c) && replay_done(eng))
            finish_replay(eng, now);
        busy = eng->ops->background && eng->ops->background(eng->cls);
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
    sfc_end(&eng->c);
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
    if (cfg->restart_only)
        eng->cfg.no_retain = true;
    snprintf(eng->device, sizeof(eng->device), "%s", cfg->device);
    eng->cfg.device = eng->device;
    eng->wake_fd = -1;
    sfj_init(&eng->j, cfg->max_retained);
    sff_init(&eng->fence);
    sfj_set_hold(&eng->j, fence_hold, eng);
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
    struct sfc_config cc = {.device = eng->device,
                            .deadline_ms = eng->cfg.deadline_ms,
                            .log = log_sink,
                            .log_arg = eng};
    eng->conn_ops = engine_conn_ops;
    const struct sf_class_ops *o = eng->ops;
    if (o->standby_setup && o->standby_connect && o->standby_teardown && o->promote) {
        eng->conn_ops.standby_setup = conn_standby_setup;
        eng->conn_ops.standby_connect = conn_standby_connect;
        eng->conn_ops.standby_teardown = conn_standby_teardown;
        eng->conn_ops.promote = conn_promote;
        if (o->forget)
            eng->conn_ops.forget = conn_forget;
    }
    if (sfc_open(&eng->c, &eng->conn_ops, eng, &cc) < 0)
        return -1;
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
    sff_fini(&eng->fence);
    sfc_close(&eng->c);
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

bool sf_engine_switching(const struct sf_engine *eng)
{
    return eng->c.switching;
}

uint64_t sf_engine_recoveries(struct sf_engine *eng)
{
    pthread_mutex_lock(&eng->mu);
    uint64_t r = eng->pub_recoveries;
    pthread_mutex_unlock(&eng->mu);
    return r;
}
