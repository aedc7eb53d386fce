/* tfe - a tiny shadow-aware frontend for shadowd's tests, run in a guest:
 *
 *   tfe FE-DIR [--ping-ms N] [--deadline-ms N] [--stock] [--no-slot]
 *
 * Speaks just enough xenbus to show shadowd's job: waits for the backend's
 * InitWait, writes ring-ref and Initialised, goes Connected when the backend
 * does. Live, it writes tfe-ping every ping-ms and expects the backend's
 * BE/tbe-pong to match within deadline-ms (the "I/O"). On a fault (no pong,
 * backend Closing/Closed/vanished, back in InitWait) it sets shadow/state
 * recovering and writes shadow/report; when shadow/generation grows it
 * re-reads backend/backend-id and reconnects there; connected again it
 * checks the device is the same (the backend's sectors), sets shadow/state
 * live, counts shadow/recoveries and writes shadow/last-recovery. A
 * different device makes it shadow/state failed. It logs one line per event
 * on stdout.
 *
 * The hot standby (schema.md, "The hot standby's connection"): when
 * FE/shadow/standby names a slot, it makes a second connection there -
 * ring-ref, Initialised, Connected once the slot's backend is - and holds it
 * idle (nothing is pinged on it). When shadow/generation grows with
 * FE/backend the backend of that held, Connected connection, it switches to
 * it without a handshake: live at once, pinging through the slot's keys
 * (the backend reads the dir its `frontend` names), FE/state Closed, the
 * recovery counted. A connection is made in the slot whose backend is
 * FE/backend, else in FE. It writes into a slot only while the slot has a
 * backend key, in one transaction, so a slot the toolstack removed never
 * comes back.
 *
 * --stock: a frontend that is not shadow-aware, as a guest kernel's own
 * driver: it writes no shadow/ key, ignores shadow/generation, and at the
 * first fault goes Closed and stays there (Linux's blkfront does not follow a
 * backend that moved).
 * --no-slot: shadow-aware, but ignores FE/shadow/standby (a frontend that
 * cannot hold a second connection). */
#define _GNU_SOURCE
#include "pv-keys.h"
#include "understudy-keys.h"
#include "xs_txn.h"
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
enum sbst { SB_WAIT_BE, SB_WAIT_CONN, SB_UP };

#define DIR_MAX 320

struct fe {
    struct xs_handle *xs;
    const char *dir;    /* FE */
    char live[DIR_MAX]; /* the live connection's dir: FE or a slot */
    char be[256];       /* its backend */
    enum st st;
    bool recovering;
    uint64_t gen, recoveries, report_seq, ping, t_detect, t_ping, sectors;
    unsigned ping_ms, deadline_ms;
    bool stock, no_slot;
    /* the connection held idle for the standby */
    char sb_name[16];     /* "": none */
    char sb_dir[DIR_MAX]; /* FE/shadow/<sb_name> */
    char sb_be[256];
    enum sbst sb_st;
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

struct put_txn {
    const char *dir, *key, *val;
    bool guarded; /* a slot: only while it has a backend key */
};

static int put_body(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    struct put_txn *p = arg;
    char path[DIR_MAX + 64];
    if (p->guarded) {
        char *b = xsu_read(xs, t, p->dir, PVK_BACKEND, 256);
        if (!b)
            return 0; /* removed by the toolstack: not ours to re-create */
        free(b);
    }
    snprintf(path, sizeof(path), "%s/%s", p->dir, p->key);
    return xs_write(xs, t, path, p->val, (unsigned)strlen(p->val)) ? 0 : -1;
}

/* Write key in dir (FE, or a slot: then guarded). */
static void put_in(struct fe *f, const char *dir, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put_in(struct fe *f, const char *dir, const char *key, const char *fmt, ...)
{
    char v[300];
    if (f->stock && !strncmp(key, "shadow/", 7))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    struct put_txn p = {.dir = dir, .key = key, .val = v, .guarded = strcmp(dir, f->dir) != 0};
    const char *call;
    if (xsu_txn(f->xs, put_body, &p, &call) < 0)
        say("write %s/%s: %s", dir, key, strerror(errno));
}

/* The dir a connection to backend be is made in: the slot whose backend it
 * is, else FE. */
static void link_dir(struct fe *f, const char *be, char *out, size_t len)
{
    static const char *const slots[] = {USK_FE_SLOT_A, USK_FE_SLOT_B};
    snprintf(out, len, "%s", f->dir);
    for (int i = 0; i < 2; i++) {
        char s[DIR_MAX];
        snprintf(s, sizeof(s), "%s/%s/%s", f->dir, USK_FE_SLOT_DIR, slots[i]);
        char *b = xsu_read(f->xs, XBT_NULL, s, PVK_BACKEND, 200);
        bool match = b && !strcmp(b, be);
        free(b);
        if (match) {
            snprintf(out, len, "%s", s);
            return;
        }
    }
}

/* The live connection is in dir now, to backend be. Leaving FE, FE/state
 * goes Closed (schema.md). */
static void set_live(struct fe *f, const char *dir, const char *be)
{
    if (!strcmp(f->live, f->dir) && strcmp(dir, f->dir))
        put_in(f, f->dir, PVK_STATE, "6");
    snprintf(f->live, sizeof(f->live), "%s", dir);
    if (strcmp(be, f->be)) {
        if (f->be[0])
            xs_unwatch(f->xs, f->be, "be");
        snprintf(f->be, sizeof(f->be), "%s", be);
        xs_watch(f->xs, f->be, "be");
    }
}

static void fault(struct fe *f, const char *kind, const char *detail)
{
    if (f->st == FAILED)
        return;
    if (f->stock) {
        say("fault: %s: %s; closed for good (stock)", kind, detail);
        put_in(f, f->live, PVK_STATE, "6");
        f->st = FAILED;
        return;
    }
    if (!f->recovering) {
        f->recovering = true;
        f->t_detect = now_ms();
    }
    put_in(f, f->dir, USK_FE_REPORT, "%llu %s %s", (unsigned long long)++f->report_seq, kind,
           detail);
    put_in(f, f->dir, USK_FE_STATE, USK_STATE_RECOVERING);
    say("fault: %s: %s; recovering", kind, detail);
    f->st = WAIT_BE;
    put_in(f, f->live, PVK_STATE, "1");
}

static void recovered(struct fe *f, const char *how)
{
    uint64_t t = now_ms() - f->t_detect;
    f->recoveries++;
    put_in(f, f->dir, USK_FE_RECOVERIES, "%llu", (unsigned long long)f->recoveries);
    put_in(f, f->dir, USK_FE_LAST_RECOVERY, "detect=0 reconnect=%llu replay=0 total=%llu",
           (unsigned long long)t, (unsigned long long)t);
    f->recovering = false;
    say("recovered on %s%s: recovery %llu, %llu ms", f->be, how, (unsigned long long)f->recoveries,
        (unsigned long long)t);
}

static void sb_drop(struct fe *f, const char *why)
{
    if (!f->sb_name[0])
        return;
    say("standby slot %s dropped: %s", f->sb_name, why);
    if (f->sb_be[0] && strcmp(f->sb_be, f->be))
        xs_unwatch(f->xs, f->sb_be, "sb");
    f->sb_name[0] = f->sb_be[0] = 0;
}

/* The toolstack switched FE to the held connection's backend: live there at
 * once, no handshake. */
static void switch_hot(struct fe *f)
{
    uint64_t now = now_ms();
    if (!f->recovering) {
        f->recovering = true;
        f->t_detect = now;
    }
    char dir[DIR_MAX], be[256], name[16];
    snprintf(dir, sizeof(dir), "%s", f->sb_dir);
    snprintf(be, sizeof(be), "%s", f->sb_be);
    snprintf(name, sizeof(name), "%s", f->sb_name);
    if (strcmp(f->sb_be, f->be))
        xs_unwatch(f->xs, f->sb_be, "sb"); /* watched again as the live one */
    f->sb_name[0] = f->sb_be[0] = 0;
    set_live(f, dir, be);
    f->st = LIVE;
    f->t_ping = now;
    f->ping++;
    put_in(f, f->live, "tfe-ping", "%llu", (unsigned long long)f->ping);
    char how[96];
    snprintf(how, sizeof(how), " (switched to the standby connection in %s, no handshake)", name);
    recovered(f, how);
    put_in(f, f->dir, USK_FE_STATE, USK_STATE_LIVE);
}

static void on_generation(struct fe *f, uint64_t g)
{
    f->gen = g;
    char *b = xsu_read(f->xs, XBT_NULL, f->dir, PVK_BACKEND, 200);
    if (!b) {
        say("generation %llu: no backend: %s", (unsigned long long)g, strerror(errno));
        return;
    }
    char be[256], dir[DIR_MAX];
    snprintf(be, sizeof(be), "%s", b);
    free(b);
    if (f->sb_name[0] && f->sb_st == SB_UP && !strcmp(be, f->sb_be) && f->st != FAILED) {
        say("generation %llu: backend is now %s, held idle in %s", (unsigned long long)g, be,
            f->sb_name);
        switch_hot(f);
        return;
    }
    link_dir(f, be, dir, sizeof(dir));
    if (f->sb_name[0] && !strcmp(dir, f->sb_dir))
        sb_drop(f, "its backend is the device's now, not yet connected: a handshake there");
    say("generation %llu: backend is now %s%s%s", (unsigned long long)g, be,
        strcmp(dir, f->dir) ? ", connecting in " : "", strcmp(dir, f->dir) ? dir : "");
    if (f->st == LIVE)
        fault(f, "backend-restarted", "rewired by the toolstack");
    set_live(f, dir, be);
    if (f->st != FAILED) {
        f->st = WAIT_BE;
        put_in(f, f->live, PVK_STATE, "1");
    }
}

/* FE/shadow/standby: hold a connection in the slot it names. */
static void standby(struct fe *f)
{
    char name[16] = "", dir[DIR_MAX] = "";
    char *v = xsu_read(f->xs, XBT_NULL, f->dir, USK_FE_STANDBY, 15);
    if (v && (!strcmp(v, USK_FE_SLOT_A) || !strcmp(v, USK_FE_SLOT_B))) {
        snprintf(name, sizeof(name), "%s", v);
        snprintf(dir, sizeof(dir), "%s/%s/%s", f->dir, USK_FE_SLOT_DIR, name);
        if (!strcmp(dir, f->live))
            name[0] = 0; /* the live connection's own slot */
    }
    free(v);
    if (strcmp(name, f->sb_name)) {
        sb_drop(f, name[0] ? "the toolstack names another slot" : "the toolstack took it away");
        if (!name[0])
            return;
        snprintf(f->sb_name, sizeof(f->sb_name), "%s", name);
        snprintf(f->sb_dir, sizeof(f->sb_dir), "%s", dir);
        f->sb_be[0] = 0;
        f->sb_st = SB_WAIT_BE;
        say("standby slot %s: connecting, to hold idle", name);
        /* A ping copied from FE with the toolstack keys: nothing is pinged here. */
        char p[DIR_MAX + 16];
        snprintf(p, sizeof(p), "%s/tfe-ping", dir);
        xs_rm(f->xs, XBT_NULL, p);
    }
    if (!f->sb_name[0])
        return;
    if (!f->sb_be[0]) {
        char *b = xsu_read(f->xs, XBT_NULL, f->sb_dir, PVK_BACKEND, 200);
        if (!b)
            return;
        snprintf(f->sb_be, sizeof(f->sb_be), "%s", b);
        free(b);
        xs_watch(f->xs, f->sb_be, "sb");
    }
    int bs = xsu_read_state(f->xs, f->sb_be);
    if (f->sb_st == SB_WAIT_BE && bs == 2) {
        put_in(f, f->sb_dir, PVK_RING_REF, "%llu", (unsigned long long)(100 + f->gen));
        put_in(f, f->sb_dir, PVK_EVENT_CHANNEL, "%llu", (unsigned long long)(116 + f->gen));
        put_in(f, f->sb_dir, PVK_STATE, "3");
        f->sb_st = SB_WAIT_CONN;
    } else if (f->sb_st == SB_WAIT_CONN && bs == 4) {
        put_in(f, f->sb_dir, PVK_STATE, "4");
        f->sb_st = SB_UP;
        say("standby slot %s connected to %s; held idle", f->sb_name, f->sb_be);
    } else if (f->sb_st == SB_UP && bs == 2) {
        say("standby slot %s: its backend went back to InitWait; connecting again", f->sb_name);
        f->sb_st = SB_WAIT_BE;
    }
}

static void step(struct fe *f)
{
    uint64_t g = 0;
    if (!f->stock &&
        xsu_read_u64(f->xs, XBT_NULL, f->dir, USK_FE_GENERATION, UINT64_MAX, &g) == 0 && g > f->gen)
        on_generation(f, g);
    if (!f->stock && !f->no_slot && f->st != FAILED)
        standby(f);
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
        put_in(f, f->live, PVK_RING_REF, "%llu", (unsigned long long)(8 + f->gen));
        put_in(f, f->live, PVK_EVENT_CHANNEL, "%llu", (unsigned long long)(16 + f->gen));
        put_in(f, f->live, PVK_STATE, "3");
        f->st = WAIT_CONN;
        return;
    }
    if (f->st == WAIT_CONN && bs == 4) {
        uint64_t sectors = 0;
        xsu_read_u64(f->xs, XBT_NULL, f->be, PVK_BLK_SECTORS, UINT64_MAX, &sectors);
        if (f->sectors && sectors != f->sectors) {
            say("FAILED: the backend serves another device (sectors %llu, was %llu)",
                (unsigned long long)sectors, (unsigned long long)f->sectors);
            put_in(f, f->dir, USK_FE_STATE, USK_STATE_FAILED);
            f->st = FAILED;
            return;
        }
        f->sectors = sectors;
        put_in(f, f->live, PVK_STATE, "4");
        f->st = LIVE;
        f->t_ping = now_ms();
        if (f->ping) /* the backend answers what is in its frontend dir: maybe another one now */
            put_in(f, f->live, "tfe-ping", "%llu", (unsigned long long)f->ping);
        if (f->recovering) {
            recovered(f, "");
        } else {
            put_in(f, f->dir, USK_FE_RECOVERIES, "%llu", (unsigned long long)f->recoveries);
            say("connected to %s (sectors %llu)", f->be, (unsigned long long)sectors);
        }
        put_in(f, f->dir, USK_FE_STATE, USK_STATE_LIVE);
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
        put_in(f, f->live, "tfe-ping", "%llu", (unsigned long long)f->ping);
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: tfe FE-DIR [--ping-ms N] [--deadline-ms N] [--stock] [--no-slot]\n");
    return 2;
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
        else if (!strcmp(argv[i], "--no-slot"))
            f.no_slot = true;
        else if (argv[i][0] != '-' && !f.dir)
            f.dir = argv[i];
        else
            return usage();
    }
    if (!f.dir || !f.ping_ms || !f.deadline_ms || strlen(f.dir) > 200)
        return usage();
    f.xs = xs_open(0);
    char *b = f.xs ? xsu_read(f.xs, XBT_NULL, f.dir, PVK_BACKEND, 200) : NULL;
    if (!b) {
        fprintf(stderr, "tfe: %s: cannot read backend: %s\n", f.dir, strerror(errno));
        return 1;
    }
    char dir[DIR_MAX];
    link_dir(&f, b, dir, sizeof(dir)); /* after a promotion the live connection is in a slot */
    snprintf(f.live, sizeof(f.live), "%s", dir);
    set_live(&f, dir, b);
    free(b);
    xsu_read_u64(f.xs, XBT_NULL, f.dir, USK_FE_GENERATION, UINT64_MAX, &f.gen);
    xsu_read_u64(f.xs, XBT_NULL, f.dir, USK_FE_RECOVERIES, UINT64_MAX, &f.recoveries);
    char gpath[DIR_MAX];
    snprintf(gpath, sizeof(gpath), "%s/%s", f.dir, USK_FE_GENERATION);
    xs_watch(f.xs, gpath, "gen");
    snprintf(gpath, sizeof(gpath), "%s/%s", f.dir, USK_FE_STANDBY);
    xs_watch(f.xs, gpath, "sb");
    put_in(&f, f.dir, USK_FE_STATE, USK_STATE_RECOVERING);
    say("starting on %s in %s, generation %llu", f.be, f.live, (unsigned long long)f.gen);
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
