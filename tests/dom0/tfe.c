/* tfe - a tiny shadow-aware frontend for shadowd's tests, run in a guest:
 *
 *   tfe FE-DIR [--ping-ms N] [--deadline-ms N] [--stock]
 *
 * Speaks just enough xenbus to show shadowd's job: waits for the backend's
 * InitWait, writes ring-ref and Initialised, goes Connected when the backend
 * does. Live, it writes FE/tfe-ping every ping-ms and expects the backend's
 * BE/tbe-pong to match within deadline-ms (the "I/O"). On a fault (no pong,
 * backend Closing/Closed/vanished, back in InitWait) it sets shadow/state
 * recovering and writes shadow/report; when shadow/generation grows it
 * re-reads backend/backend-id and reconnects there; connected again it
 * checks the device is the same (the backend's sectors), sets shadow/state
 * live, counts shadow/recoveries and writes shadow/last-recovery. A
 * different device makes it shadow/state failed. It logs one line per event
 * on stdout.
 *
 * --stock: a frontend that is not shadow-aware, as a guest kernel's own
 * driver: it writes no shadow/ key, ignores shadow/generation, and at the
 * first fault goes Closed and stays there (Linux's blkfront does not follow a
 * backend that moved). */
#define _GNU_SOURCE
#include "pv-keys.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum st { WAIT_BE, WAIT_CONN, LIVE, FAILED };

struct fe {
    struct xs_handle *xs;
    const char *dir;
    char be[256];
    enum st st;
    bool recovering;
    uint64_t gen, recoveries, report_seq, ping, t_detect, t_ping, sectors;
    unsigned ping_ms, deadline_ms;
    bool stock;
};

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("tfe %llu: ", (unsigned long long)now_ms());
    vprintf(fmt, ap);
    putchar('\n');
    fflush(stdout);
    va_end(ap);
}

static void put(struct fe *f, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void put(struct fe *f, const char *key, const char *fmt, ...)
{
    char v[300], path[512];
    if (f->stock && !strncmp(key, "shadow/", 7))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    snprintf(path, sizeof(path), "%s/%s", f->dir, key);
    if (!xs_write(f->xs, XBT_NULL, path, v, (unsigned)strlen(v)))
        say("write %s: %s", path, strerror(errno));
}

static int read_backend(struct fe *f)
{
    char *b = xsu_read(f->xs, XBT_NULL, f->dir, PVK_BACKEND, 200);
    if (!b)
        return -1;
    if (strcmp(b, f->be)) {
        if (f->be[0])
            xs_unwatch(f->xs, f->be, "be");
        snprintf(f->be, sizeof(f->be), "%s", b);
        xs_watch(f->xs, f->be, "be");
    }
    free(b);
    return 0;
}

static void fault(struct fe *f, const char *kind, const char *detail)
{
    if (f->st == FAILED)
        return;
    if (f->stock) {
        say("fault: %s: %s; closed for good (stock)", kind, detail);
        put(f, PVK_STATE, "6");
        f->st = FAILED;
        return;
    }
    if (!f->recovering) {
        f->recovering = true;
        f->t_detect = now_ms();
    }
    put(f, USK_FE_REPORT, "%llu %s %s", (unsigned long long)++f->report_seq, kind, detail);
    put(f, USK_FE_STATE, USK_STATE_RECOVERING);
    say("fault: %s: %s; recovering", kind, detail);
    f->st = WAIT_BE;
    put(f, PVK_STATE, "1");
}

static void step(struct fe *f)
{
    uint64_t g = 0;
    if (!f->stock &&
        xsu_read_u64(f->xs, XBT_NULL, f->dir, USK_FE_GENERATION, UINT64_MAX, &g) == 0 &&
        g > f->gen) {
        f->gen = g;
        read_backend(f);
        say("generation %llu: backend is now %s", (unsigned long long)g, f->be);
        if (f->st == LIVE)
            fault(f, "backend-restarted", "rewired by the toolstack");
        else if (f->st != FAILED) {
            f->st = WAIT_BE;
            put(f, PVK_STATE, "1");
        }
    }
    if (f->st == FAILED)
        return;
    int bs = xsu_read_state(f->xs, f->be);
    if (f->st == LIVE) {
        if (bs < 0 && errno == ENOENT)
            fault(f, "backend-vanished", "backend dir is gone");
        else if (bs == 5 || bs == 6)
            fault(f, "backend-closed", "backend closed unasked");
        else if (bs == 2)
            fault(f, "backend-restarted", "backend went back to InitWait");
        return;
    }
    if (f->st == WAIT_BE && bs == 2) {
        put(f, PVK_RING_REF, "%llu", (unsigned long long)(8 + f->gen));
        put(f, PVK_EVENT_CHANNEL, "%llu", (unsigned long long)(16 + f->gen));
        put(f, PVK_STATE, "3");
        f->st = WAIT_CONN;
        return;
    }
    if (f->st == WAIT_CONN && bs == 4) {
        uint64_t sectors = 0;
        xsu_read_u64(f->xs, XBT_NULL, f->be, PVK_BLK_SECTORS, UINT64_MAX, &sectors);
        if (f->sectors && sectors != f->sectors) {
            say("FAILED: the backend serves another device (sectors %llu, was %llu)",
                (unsigned long long)sectors, (unsigned long long)f->sectors);
            put(f, USK_FE_STATE, USK_STATE_FAILED);
            f->st = FAILED;
            return;
        }
        f->sectors = sectors;
        put(f, PVK_STATE, "4");
        f->st = LIVE;
        f->t_ping = now_ms();
        if (f->recovering) {
            uint64_t t = now_ms() - f->t_detect;
            f->recoveries++;
            put(f, USK_FE_RECOVERIES, "%llu", (unsigned long long)f->recoveries);
            put(f, USK_FE_LAST_RECOVERY, "detect=0 reconnect=%llu replay=0 total=%llu",
                (unsigned long long)t, (unsigned long long)t);
            f->recovering = false;
            say("recovered on %s: recovery %llu, %llu ms", f->be, (unsigned long long)f->recoveries,
                (unsigned long long)t);
        } else {
            put(f, USK_FE_RECOVERIES, "%llu", (unsigned long long)f->recoveries);
            say("connected to %s (sectors %llu)", f->be, (unsigned long long)sectors);
        }
        put(f, USK_FE_STATE, USK_STATE_LIVE);
    }
}

static void io(struct fe *f)
{
    if (f->st != LIVE)
        return;
    uint64_t now = now_ms(), pong = 0;
    bool answered =
        f->ping == 0 || (xsu_read_u64(f->xs, XBT_NULL, f->be, "tbe-pong", UINT64_MAX, &pong) == 0 &&
                         pong == f->ping);
    if (!answered && now - f->t_ping > f->deadline_ms) {
        char d[64];
        snprintf(d, sizeof(d), "ping %llu unanswered for %llu ms", (unsigned long long)f->ping,
                 (unsigned long long)(now - f->t_ping));
        fault(f, "timeout", d);
        return;
    }
    if (answered && now - f->t_ping >= f->ping_ms) {
        f->ping++;
        f->t_ping = now;
        put(f, "tfe-ping", "%llu", (unsigned long long)f->ping);
    }
}

int main(int argc, char **argv)
{
    struct fe f = {.ping_ms = 100, .deadline_ms = 1500};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ping-ms") && i + 1 < argc)
            f.ping_ms = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--deadline-ms") && i + 1 < argc)
            f.deadline_ms = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stock"))
            f.stock = true;
        else if (argv[i][0] != '-' && !f.dir)
            f.dir = argv[i];
        else {
            fprintf(stderr, "usage: tfe FE-DIR [--ping-ms N] [--deadline-ms N] [--stock]\n");
            return 2;
        }
    }
    if (!f.dir || !f.ping_ms || !f.deadline_ms) {
        fprintf(stderr, "usage: tfe FE-DIR [--ping-ms N] [--deadline-ms N] [--stock]\n");
        return 2;
    }
    f.xs = xs_open(0);
    if (!f.xs || read_backend(&f) < 0) {
        fprintf(stderr, "tfe: %s: cannot read backend: %s\n", f.dir, strerror(errno));
        return 1;
    }
    xsu_read_u64(f.xs, XBT_NULL, f.dir, USK_FE_GENERATION, UINT64_MAX, &f.gen);
    xsu_read_u64(f.xs, XBT_NULL, f.dir, USK_FE_RECOVERIES, UINT64_MAX, &f.recoveries);
    char gpath[300];
    snprintf(gpath, sizeof(gpath), "%s/%s", f.dir, USK_FE_GENERATION);
    xs_watch(f.xs, gpath, "gen");
    put(&f, USK_FE_STATE, USK_STATE_RECOVERING);
    say("starting on %s, generation %llu", f.be, (unsigned long long)f.gen);
    for (;;) {
        struct pollfd p = {.fd = xs_fileno(f.xs), .events = POLLIN};
        int r = poll(&p, 1, 20);
        if (r < 0 && errno != EINTR)
            break;
        char **ev;
        while ((ev = xs_check_watch(f.xs)))
            free(ev);
        step(&f);
        io(&f);
    }
    return 1;
}
