/* sn_dev.c - the shadow sndfront: its connections as a class of the
 * connection driver (setup, connect and restore, isolation), the streams'
 * service, the audio gap of each recovery, the loop. */
#define _GNU_SOURCE
#include "sn_dev.h"

#include "sf_time.h"
#include "sn_xenbus.h"
#include "understudy-keys.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <xen/io/xenbus.h>

#define SNDIF_VERSION 2u /* the event page: positions from the backend's clock */
#define IDLE_MS       1000u

static void log_sink(void *arg, enum sf_log_level level, const char *msg)
{
    const struct sn_dev *d = arg;
    if (level == SF_LOG_DEBUG && !d->cfg.verbose)
        return;
    fprintf(stderr, "understudy-sndfront[%s]: %s\n", d->cfg.device, msg);
}

void sn_log(const struct sn_dev *d, bool verbose_only, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sf_vlogf(log_sink, (void *)d, verbose_only ? SF_LOG_DEBUG : SF_LOG_INFO, fmt, ap);
    va_end(ap);
}

static void stream_log(void *arg, const struct sn_stream *s, bool error, const char *msg)
{
    sn_log(arg, !error, "stream %u/%u: %s", s->cfg.pcm_idx, s->cfg.idx, msg);
}

/* ---- the card as a class of the connection driver ---- */

/* The rings and buffers retired at a hot switch (sn_teardown), once the
 * streams are started on the standby (sn_promote) or before another
 * teardown. */
static void release_retired(struct sn_dev *d)
{
    for (unsigned i = 0; i < d->nst; i++)
        sn_stream_release(&d->st[i]);
}

static void sn_teardown(void *arg, struct sfx *x)
{
    struct sn_dev *d = arg;
    release_retired(d);
    if (d->c.switching) {
        /* A hot switch: the standby's streams start first (sn_promote);
         * the keys wait for sn_forget. */
        for (unsigned i = 0; i < d->nst; i++)
            sn_stream_retire(&d->st[i]);
        return;
    }
    for (unsigned i = 0; i < d->nst; i++)
        sn_stream_teardown(&d->st[i]);
    sn_remove_transport(x, d->st, d->nst);
}

/* A hot switch's keys left in the failed transport's dir (sn_teardown). */
static void sn_forget(void *arg, struct sfx *x)
{
    struct sn_dev *d = arg;
    sn_remove_transport(x, d->st, d->nst);
}

static int sn_setup(void *arg, struct sfx *x, char *why, size_t len)
{
    struct sn_dev *d = arg;
    char seen[64];
    int r = sn_backend_offers(x, SNDIF_VERSION, seen, sizeof(seen));
    if (r < 0) {
        sn_log(d, false, "backend %s: %s: %m; retrying", x->be, "versions");
        return -1;
    }
    if (r == 0 && d->c.rec.state == SF_CONNECTING) {
        snprintf(why, len, "backend offers sndif versions '%s'; this frontend needs %u", seen,
                 SNDIF_VERSION);
        return SFC_MISMATCH;
    }
    if (r == 0) {
        /* The card has run on version 2: a backend that does not offer it is
         * a bad backend, not another card. Wait for it to, or for the
         * toolstack's next one, rather than fail for good. */
        sn_log(d, false, "backend %s offers sndif versions '%s'; this frontend needs %u; retrying",
               x->be, seen, SNDIF_VERSION);
        return -1;
    }
    for (unsigned i = 0; i < d->nst; i++)
        if (sn_stream_setup(&d->st[i], d->gs, d->xce, x->be_id) < 0) {
            sn_log(d, false,
                   "stream %u: share a ring and an event page with domain %u: %m; retrying", i,
                   x->be_id);
            return -1;
        }
    if (sn_write_transport(x, SNDIF_VERSION, d->st, d->nst, false) < 0) {
        sn_log(d, false, "xenstore: write the transport keys in %s: %m; retrying", d->cfg.device);
        return -1;
    }
    return 0;
}

static int sn_connect(void *arg, struct sfx *x, bool first, char *what, size_t len)
{
    struct sn_dev *d = arg;
    (void)x;
    uint64_t now = sf_now_ms();
    unsigned active = 0, started = 0;
    for (unsigned i = 0; i < d->nst; i++) {
        bool carried = d->st[i].carried; /* open on a promoted standby ahead */
        sn_stream_connected(&d->st[i], now);
        active += d->st[i].restoring;
        started += carried && !d->st[i].restoring;
    }
    if (first)
        snprintf(what, len, "card '%s', %u stream%s, sndif version %u", d->card.short_name, d->nst,
                 d->nst == 1 ? "" : "s", SNDIF_VERSION);
    else if (!d->cfg.shadow)
        snprintf(what, len, "shadow off: no stream reopened");
    else if (started)
        snprintf(what, len,
                 "starting %u stream%s opened on it ahead, reopening %u, at the programs' "
                 "positions",
                 started, started == 1 ? "" : "s", active);
    else
        snprintf(what, len, "reopening %u stream%s at the programs' positions", active,
                 active == 1 ? "" : "s");
    return 0;
}

/* A fault: how far each stream's audio got; the clocks keep running. */
static void sn_isolate(void *arg, char *held, size_t len)
{
    struct sn_dev *d = arg;
    uint64_t now = sf_now_ms();
    unsigned running = 0;
    for (unsigned i = 0; i < d->nst; i++) {
        sn_stream_lost(&d->st[i], now);
        running += d->st[i].lost;
    }
    snprintf(held, len,
             "%u stream%s playing or capturing: audio dropped until a backend is back, "
             "their clocks running",
             running, running == 1 ? "" : "s");
}

static void sn_fail(void *arg, char *what, size_t len)
{
    (void)arg;
    snprintf(what, len, "the programs' audio is dropped from now on (their clocks run)");
}

static bool sn_oldest(void *arg, uint64_t *since)
{
    const struct sn_dev *d = arg;
    bool any = false;
    for (unsigned i = 0; i < d->nst; i++) {
        uint64_t o;
        if (sn_stream_oldest(&d->st[i], &o) && (!any || o < *since)) {
            *since = o;
            any = true;
        }
    }
    return any;
}

/* ---- the hot standby: every stream's transport shared with it, idle ---- */

static void sn_standby_teardown(void *arg, struct sfx *sx)
{
    struct sn_dev *d = arg;
    for (unsigned i = 0; i < d->nst; i++)
        sn_stream_standby_teardown(&d->st[i]);
    sn_remove_transport(sx, d->st, d->nst);
}

static int sn_standby_setup(void *arg, struct sfx *sx, char *why, size_t len)
{
    struct sn_dev *d = arg;
    char seen[64];
    int r = sn_backend_offers(sx, SNDIF_VERSION, seen, sizeof(seen));
    if (r < 0) {
        sn_log(d, false, "standby backend %s: versions: %m; retrying", sx->be);
        return -1;
    }
    if (r == 0) {
        snprintf(why, len, "it offers sndif versions '%s'; this frontend needs %u", seen,
                 SNDIF_VERSION);
        return SFC_MISMATCH;
    }
    for (unsigned i = 0; i < d->nst; i++)
        if (sn_stream_standby_setup(&d->st[i], d->gs, d->xce, sx->be_id) < 0) {
            sn_log(d, false, "stream %u: share a standby ring with domain %u: %m; retrying", i,
                   sx->be_id);
            return -1;
        }
    if (sn_write_transport(sx, SNDIF_VERSION, d->st, d->nst, true) < 0) {
        sn_log(d, false, "xenstore: write the transport keys in %s: %m; retrying", sx->fe);
        return -1;
    }
    return 0;
}

static int sn_standby_connect(void *arg, struct sfx *sx, char *what, size_t len)
{
    struct sn_dev *d = arg;
    (void)sx;
    snprintf(what, len,
             "%u stream transport%s shared; a stream a program has set up is opened there "
             "ahead, never started",
             d->nst, d->nst == 1 ? "" : "s");
    return 0;
}

/* The failed transports are gone: the standby's are the streams' now; a
 * stream open there ahead starts at once, any other reopens as on any new
 * backend. */
static int sn_promote(void *arg, struct sfx *x, char *what, size_t len)
{
    struct sn_dev *d = arg;
    uint64_t now = sf_now_ms();
    for (unsigned i = 0; i < d->nst; i++)
        sn_stream_promote(&d->st[i], now);
    int r = sn_connect(arg, x, false, what, len);
    release_retired(d); /* the streams are started on the standby by now */
    return r;
}

/* The held standby: each stream opened or closed on it as its program's
 * parameters say, its answers checked. */
static void standby_service(struct sn_dev *d, uint64_t now)
{
    char why[256];
    if (d->c.sb_phase != SFC_UP)
        return;
    for (unsigned i = 0; i < d->nst; i++)
        if (sn_stream_standby_service(&d->st[i], now, d->cfg.deadline_ms, why, sizeof(why)) < 0) {
            sfc_standby_fault(&d->c, "stream %u/%u: %s", d->st[i].cfg.pcm_idx, d->st[i].cfg.idx,
                              why);
            return;
        }
}

static const struct sfc_ops sn_conn_ops = {
    /* sndif.h: the frontend is Initialised once its keys are written; the
     * backend then connects. */
    .setup_state = XenbusStateInitialised,
    .setup = sn_setup,
    .connect = sn_connect,
    .teardown = sn_teardown,
    .isolate = sn_isolate,
    .fail = sn_fail,
    .oldest = sn_oldest,
    .standby_setup = sn_standby_setup,
    .standby_connect = sn_standby_connect,
    .standby_teardown = sn_standby_teardown,
    .promote = sn_promote,
    .forget = sn_forget,
};

/* ---- the loop ---- */

/* Every stream reopened (or nothing to reopen): the recovery ends, with its
 * audio gap: the largest of its streams', published as shadow/last-gap. */
static void finish_recovery(struct sn_dev *d, uint64_t now)
{
    for (unsigned i = 0; i < d->nst; i++)
        if (!sn_stream_restored(&d->st[i]))
            return;
    uint64_t gap = 0;
    char extra[256] = "";
    size_t o = 0;
    for (unsigned i = 0; i < d->nst; i++) {
        const struct sn_stream *s = &d->st[i];
        if (!s->gap_known)
            continue;
        uint64_t ms = s->hw.rate ? s->gap_frames * 1000u / s->hw.rate : 0;
        gap = ms > gap ? ms : gap;
        if (o < sizeof(extra))
            o += (size_t)snprintf(extra + o, sizeof(extra) - o,
                                  "; stream %u/%u gap %" PRIu64 " ms (%" PRIu64 " frames dropped)",
                                  s->cfg.pcm_idx, s->cfg.idx, ms, s->gap_frames);
    }
    if (sfx_write_dev(&d->c.x, USK_FE_LAST_GAP, "%" PRIu64, gap) < 0)
        sn_log(d, false, "xenstore write %s/%s: %m", d->cfg.device, USK_FE_LAST_GAP);
    sfc_replayed(&d->c, now, extra);
}

static void service(struct sn_dev *d, uint64_t now)
{
    char why[256];
    for (unsigned i = 0; i < d->nst && d->c.phase == SFC_UP; i++) {
        int r = sn_stream_service(&d->st[i], now, why, sizeof(why));
        if (r < 0) {
            sfc_fault(&d->c, SF_BAD_RESPONSE, "stream %u/%u: %s", d->st[i].cfg.pcm_idx,
                      d->st[i].cfg.idx, why);
            return;
        }
        if (r > 0)
            sfc_alive(&d->c, now);
    }
    if (d->c.phase != SFC_UP)
        return;
    uint64_t age;
    if (sfc_overdue(&d->c, now, &age)) {
        sfc_fault(&d->c, SF_TIMEOUT, "a request unanswered for %" PRIu64 " ms (deadline %u ms)",
                  age, d->cfg.deadline_ms);
        return;
    }
    for (unsigned i = 0; i < d->nst; i++)
        if (sn_stream_stalled(&d->st[i], now, d->cfg.deadline_ms, why, sizeof(why))) {
            sfc_fault(&d->c, SF_TIMEOUT, "%s", why);
            return;
        }
    if (sfc_replaying(&d->c))
        finish_recovery(d, now);
}

static int poll_timeout(const struct sn_dev *d, uint64_t now)
{
    unsigned t = (unsigned)sfc_timeout(&d->c, now, IDLE_MS);
    for (unsigned i = 0; i < d->nst; i++) {
        t = sn_stream_timeout(&d->st[i], now, d->cfg.deadline_ms, t);
        if (d->c.sb_phase == SFC_UP)
            t = sn_stream_standby_timeout(&d->st[i], now, d->cfg.deadline_ms, t);
    }
    return (int)t;
}

static void on_signal(struct sn_dev *d, int sigfd)
{
    struct signalfd_siginfo si;
    while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        sn_log(d, false, "signal %u: stopping", si.ssi_signo);
        d->stop = true;
    }
}

enum { P_SIG, P_EVTCHN, P_CONN, P_SRV = P_CONN + SFC_NFDS };

int sn_dev_run(struct sn_dev *d, int sigfd)
{
    sfc_begin(&d->c);
    struct pollfd p[P_SRV + 1 + SN_MAX_CLIENTS];
    while (!d->stop) {
        uint64_t now = sf_now_ms();
        p[P_SIG] = (struct pollfd){.fd = sigfd, .events = POLLIN};
        p[P_EVTCHN] = (struct pollfd){.fd = d->c.phase != SFC_DOWN ? xenevtchn_fd(d->xce) : -1,
                                      .events = POLLIN};
        sfc_pollfds(&d->c, &p[P_CONN]);
        unsigned ns = sn_server_pollfds(&d->srv, &p[P_SRV], 1 + SN_MAX_CLIENTS);
        if (poll(p, P_SRV + ns, poll_timeout(d, now)) < 0 && errno != EINTR) {
            sn_log(d, false, "poll: %m");
            usleep(10000);
        }
        now = sf_now_ms();
        if (p[P_SIG].revents & POLLIN)
            on_signal(d, sigfd);
        if (p[P_EVTCHN].revents & POLLIN)
            sn_ring_ack(d->xce);
        sfc_step(&d->c, now);
        if (d->c.phase == SFC_UP)
            service(d, sf_now_ms()); /* after the step: requests it issued are not in the future */
        sn_server_events(&d->srv, &p[P_SRV], ns, sf_now_ms());
        standby_service(d, sf_now_ms()); /* after the programs: what they set up this turn */
    }
    sfc_end(&d->c);
    return 0;
}

int sn_dev_open(struct sn_dev *d, const struct sn_config *cfg)
{
    memset(d, 0, sizeof(*d));
    d->cfg = *cfg;
    d->srv.lfd = -1;
    d->host = (struct sn_host){.arg = d, .log = stream_log, .capture = sn_server_capture};
    struct sfc_config cc = {.device = cfg->device,
                            .deadline_ms = cfg->deadline_ms,
                            /* WRITE answers may wait for the next position event (sn_ring_quiet):
                             * no turns but the deadline's */
                            .tick_ms = cfg->deadline_ms,
                            .log = log_sink,
                            .log_arg = d};
    if (sfc_open(&d->c, &sn_conn_ops, d, &cc) < 0)
        return -1;
    char msg[512];
    if (sndc_read(sfx_xs(&d->c.x), d->c.x.dev, &d->card, msg, sizeof(msg)) < 0) {
        sn_log(d, false, "the card in %s: %s", cfg->device, msg);
        return -1;
    }
    d->nst = d->card.nr_streams;
    for (unsigned i = 0; i < d->nst; i++)
        sn_stream_init(&d->st[i], &d->host, i, &d->card.st[i], cfg->shadow);
    d->gs = xengntshr_open(NULL, 0);
    d->xce = xenevtchn_open(NULL, 0);
    if (!d->gs || !d->xce) {
        sn_log(d, false, "open %s: %m", !d->gs ? "gntalloc (xengntshr_open)" : "xenevtchn_open");
        return -1;
    }
    d->host.capture_arg = &d->srv;
    if (sn_server_open(&d->srv, cfg->socket, d->st, d->nst, log_sink, d) < 0)
        return -1;
    sn_log(d, false, "card '%s': %u stream%s; programs connect at %s%s", d->card.short_name, d->nst,
           d->nst == 1 ? "" : "s", cfg->socket,
           cfg->shadow ? "" : "; shadow off: a new backend gets no stream back (restart only)");
    return 0;
}

void sn_dev_close(struct sn_dev *d)
{
    if (!d)
        return;
    sn_server_close(&d->srv);
    for (unsigned i = 0; i < d->nst; i++)
        sn_stream_free(&d->st[i]);
    d->nst = 0;
    if (d->xce)
        xenevtchn_close(d->xce);
    if (d->gs)
        xengntshr_close(d->gs);
    sfc_close(&d->c);
    d->xce = NULL;
    d->gs = NULL;
}
