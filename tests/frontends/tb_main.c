/* tb_main.c - testback: options, the xenbus backend state machine, faults
 * from the inject key, the loop.
 *
 *   testback --backend DIR [--file PATH] [--cache none|writeback|volatile]
 *            [--sector-size N] [--max-ring-order N] [--max-indirect N]
 *            [--no-persistent] [--no-flush] [--barrier] [--no-discard]
 *            [--hostile SEED] [--hostile-pct N] [--hostile-for-ms N]
 *            [--hostile-after N]
 *
 * States: InitWait once the features are published; Connected when the
 * frontend is Initialised and its ring maps; Closed when the frontend
 * closes (or its ring cannot be used); back to InitWait when a closed
 * frontend goes Initialising. The backend dir vanishing ends the process. */
#define _GNU_SOURCE
#include "tb.h"
#include "pv-keys.h"

#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

void tb_log(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "testback[%d]: %s\n", (int)getpid(), msg);
}

uint64_t tb_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void tb_set_state(struct tb_backend *b, int state)
{
    if (b->state == state)
        return;
    tb_log("state %s -> %s", xsu_state_name(b->state), xsu_state_name(state));
    b->state = state;
    if (xsu_printf(b->xs, XBT_NULL, b->be, PVK_STATE, "%d", state) < 0)
        tb_log("xenstore write %s/state: %m", b->be);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: testback --backend DIR [--file PATH] [--cache none|writeback|volatile]\n"
            "  [--sector-size N] [--max-ring-order N] [--max-indirect N] [--no-persistent]\n"
            "  [--no-flush] [--barrier] [--no-discard] [--hostile SEED] [--hostile-pct N]\n"
            "  [--hostile-for-ms N] [--hostile-after N]\n");
    exit(2);
}

static unsigned num(const char *s)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || v > UINT32_MAX)
        usage();
    return (unsigned)v;
}

static int parse_cache(const char *s, enum tb_cache *out)
{
    if (!strcmp(s, "none"))
        *out = TB_CACHE_NONE;
    else if (!strcmp(s, "writeback"))
        *out = TB_CACHE_WRITEBACK;
    else if (!strcmp(s, "volatile"))
        *out = TB_CACHE_VOLATILE;
    else
        return -1;
    return 0;
}

static void parse(int argc, char **argv, struct tb_opts *o)
{
    *o = (struct tb_opts){.cache = TB_CACHE_WRITEBACK,
                          .sector_size = 512,
                          .max_ring_order = 2,
                          .max_indirect = 64,
                          .persistent = true,
                          .flush = true,
                          .discard = true,
                          .hostile_pct = 30};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-persistent"))
            o->persistent = false;
        else if (!strcmp(a, "--no-flush"))
            o->flush = false;
        else if (!strcmp(a, "--barrier"))
            o->barrier = true;
        else if (!strcmp(a, "--no-discard"))
            o->discard = false;
        else if (!v)
            usage();
        else if (i++, !strcmp(a, "--backend"))
            o->backend = v;
        else if (!strcmp(a, "--file"))
            o->file = v;
        else if (!strcmp(a, "--cache")) {
            if (parse_cache(v, &o->cache) < 0)
                usage();
            o->cache_set = true;
        } else if (!strcmp(a, "--sector-size"))
            o->sector_size = num(v);
        else if (!strcmp(a, "--max-ring-order"))
            o->max_ring_order = num(v);
        else if (!strcmp(a, "--max-indirect"))
            o->max_indirect = num(v);
        else if (!strcmp(a, "--hostile")) {
            o->hostile = true;
            o->seed = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--hostile-pct"))
            o->hostile_pct = num(v);
        else if (!strcmp(a, "--hostile-for-ms"))
            o->hostile_for_ms = num(v);
        else if (!strcmp(a, "--hostile-after"))
            o->hostile_after = num(v);
        else
            usage();
    }
    if (!o->backend || o->max_ring_order > 4 || o->sector_size < 512 || o->sector_size > 4096 ||
        (o->sector_size & (o->sector_size - 1)))
        usage();
}

static int publish_features(struct tb_backend *b)
{
    struct xs_handle *xs = b->xs;
    const char *be = b->be;
    bool flush = b->o.flush && b->o.cache != TB_CACHE_NONE;
    b->o.flush = flush;
    if (xsu_printf(xs, XBT_NULL, be, PVK_BLK_SECTORS, "%" PRIu64, b->sectors) < 0 ||
        xsu_printf(xs, XBT_NULL, be, PVK_BLK_SECTOR_SIZE, "%u", b->o.sector_size) < 0 ||
        xsu_printf(xs, XBT_NULL, be, PVK_BLK_INFO, "0") < 0 ||
        xsu_printf(xs, XBT_NULL, be, PVK_BLK_FEATURE_FLUSH, "%d", flush) < 0 ||
        xsu_printf(xs, XBT_NULL, be, PVK_BLK_FEATURE_BARRIER, "%d", b->o.barrier) < 0 ||
        xsu_printf(xs, XBT_NULL, be, PVK_BLK_FEATURE_DISCARD, "%d", b->o.discard) < 0 ||
        xsu_printf(xs, XBT_NULL, be, PVK_BLK_DISCARD_GRANULARITY, "%u", b->o.sector_size) < 0 ||
        xsu_printf(xs, XBT_NULL, be, PVK_BLK_DISCARD_ALIGNMENT, "0") < 0 ||
        xsu_printf(xs, XBT_NULL, be, PVK_BLK_FEATURE_PERSISTENT, "%d", b->o.persistent) < 0 ||
        xsu_printf(xs, XBT_NULL, be, PVK_BLK_MAX_RING_PAGE_ORDER, "%u", b->o.max_ring_order) < 0)
        return -1;
    if (b->o.max_indirect &&
        xsu_printf(xs, XBT_NULL, be, PVK_BLK_FEATURE_MAX_INDIRECT, "%u", b->o.max_indirect) < 0)
        return -1;
    if (!b->o.max_indirect) {
        char path[300];
        snprintf(path, sizeof(path), "%s/" PVK_BLK_FEATURE_MAX_INDIRECT, be);
        xs_rm(xs, XBT_NULL, path);
    }
    return 0;
}

static void disconnect(struct tb_backend *b)
{
    tb_conn_close(b->conn);
    b->conn = NULL;
}

/* Act on the frontend's state. Returns false when the backend dir is gone. */
static bool step(struct tb_backend *b)
{
    char *fe = xsu_read(b->xs, XBT_NULL, b->be, PVK_FRONTEND, 255);
    if (!fe && errno == ENOENT)
        return false;
    free(fe);
    int fs = xsu_read_state(b->xs, b->fe);
    if (b->state == XenbusStateInitWait && fs == XenbusStateInitialised) {
        b->conn = tb_conn_open(b);
        tb_set_state(b, b->conn ? XenbusStateConnected : XenbusStateClosed);
    } else if (b->state == XenbusStateConnected && fs != XenbusStateConnected &&
               fs != XenbusStateInitialised) {
        tb_log("frontend went %s: disconnecting", xsu_state_name(fs));
        disconnect(b);
        tb_set_state(b, XenbusStateClosed);
        if (fs == XenbusStateInitialising)
            tb_set_state(b, XenbusStateInitWait);
    } else if (b->state == XenbusStateClosed && fs == XenbusStateInitialising) {
        tb_set_state(b, XenbusStateInitWait);
    }
    return true;
}

/* DRV/data/understudy/inject: "<seq> <fault> [<count>]", once per new seq. */
static void check_inject(struct tb_backend *b)
{
    char *v = xsu_read(b->xs, XBT_NULL, b->drv, USK_DRV_INJECT, 128);
    if (!v)
        return;
    unsigned long long seq;
    char fault[32];
    unsigned count = 1;
    int n = sscanf(v, "%llu %31s %u", &seq, fault, &count);
    free(v);
    if (n < 2 || seq <= b->inject_seq)
        return;
    b->inject_seq = seq;
    tb_log("INJECT %llu %s %u", seq, fault, count);
    if (!strcmp(fault, USK_FAULT_CORRUPT))
        b->corrupt_left = count ? count : 1;
    else if (!strcmp(fault, USK_FAULT_HANG))
        b->hang = true;
    else if (!strcmp(fault, USK_FAULT_SLOW))
        b->slow_ms = count;
    else if (!strcmp(fault, USK_FAULT_CRASH))
        abort();
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int setup(struct tb_backend *b)
{
    snprintf(b->be, sizeof(b->be), "%s", b->o.backend);
    b->xs = xs_open(0);
    if (!b->xs) {
        tb_log("xs_open: %m");
        return -1;
    }
    unsigned drv;
    if (sscanf(b->be, "/local/domain/%u/", &drv) != 1) {
        tb_log("%s: not under /local/domain/<domid>", b->be);
        return -1;
    }
    b->drv_id = drv;
    snprintf(b->drv, sizeof(b->drv), "/local/domain/%u", drv);
    char *fe = xsu_read(b->xs, XBT_NULL, b->be, PVK_FRONTEND, 255);
    uint64_t fid;
    if (!fe || xsu_read_u64(b->xs, XBT_NULL, b->be, PVK_FRONTEND_ID, 0x7fef, &fid) < 0) {
        tb_log("%s: bad frontend or frontend-id: %m", b->be);
        free(fe);
        return -1;
    }
    snprintf(b->fe, sizeof(b->fe), "%s", fe);
    free(fe);
    b->fe_id = (unsigned)fid;
    char *params = b->o.file ? NULL : xsu_read(b->xs, XBT_NULL, b->be, PVK_BLK_PARAMS, 1023);
    const char *file = b->o.file ? b->o.file : params;
    if (!file) {
        tb_log("%s/params: %m", b->be);
        return -1;
    }
    if (!b->o.cache_set) {
        char *c = xsu_read(b->xs, XBT_NULL, b->be, USK_BE_CACHE, 32);
        if (c && parse_cache(c, &b->o.cache) < 0)
            tb_log("%s/%s: unknown value %s, using writeback", b->be, USK_BE_CACHE, c);
        free(c);
    }
    uint64_t bytes = 0;
    b->store = tb_store_open(file, b->o.cache, &bytes);
    if (!b->store) {
        tb_log("open %s: %m", file);
        free(params);
        return -1;
    }
    snprintf(b->file, sizeof(b->file), "%s", file);
    free(params);
    if (bytes % b->o.sector_size || !bytes) {
        tb_log("size %" PRIu64 " is not a positive multiple of %u", bytes, b->o.sector_size);
        return -1;
    }
    b->sectors = bytes >> BLK_SECTOR_SHIFT;
    b->xgt = xengnttab_open(NULL, 0);
    b->xce = xenevtchn_open(NULL, 0);
    if (!b->xgt || !b->xce) {
        tb_log("open gnttab/evtchn: %m");
        return -1;
    }
    xengnttab_set_max_grants(b->xgt, 8192);
    char path[300];
    snprintf(path, sizeof(path), "%s/" PVK_STATE, b->fe);
    char ipath[300];
    snprintf(ipath, sizeof(ipath), "%s/%s", b->drv, USK_DRV_INJECT);
    if (!xs_watch(b->xs, path, "fe") || !xs_watch(b->xs, b->be, "be") ||
        !xs_watch(b->xs, ipath, "inject")) {
        tb_log("xs_watch: %m");
        return -1;
    }
    if (b->o.hostile) {
        tb_srand(b->o.seed);
        tb_log("HOSTILE mode armed: seed=%llu pct=%u after %u requests",
               (unsigned long long)b->o.seed, b->o.hostile_pct, b->o.hostile_after);
    }
    if (publish_features(b) < 0) {
        tb_log("publish features under %s: %m", b->be);
        return -1;
    }
    b->state = XenbusStateUnknown;
    tb_set_state(b, XenbusStateInitWait);
    tb_log("TESTBACK-READY pid=%d file=%s sectors=%" PRIu64 " cache=%d hostile=%d", (int)getpid(),
           b->file, b->sectors, b->o.cache, b->o.hostile);
    return 0;
}

int main(int argc, char **argv)
{
    static struct tb_backend b;
    parse(argc, argv, &b.o);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    int rc = 1;
    if (setup(&b) < 0)
        goto out;
    check_inject(&b);
    rc = 0;
    while (!stop) {
        struct pollfd p[2] = {{.fd = xs_fileno(b.xs), .events = POLLIN},
                              {.fd = b.conn ? xenevtchn_fd(b.xce) : -1, .events = POLLIN}};
        if (poll(p, 2, 1000) < 0 && errno != EINTR) {
            tb_log("poll: %m");
            rc = 1;
            break;
        }
        char **w;
        bool fe_ev = false;
        while ((w = xs_check_watch(b.xs)) != NULL) {
            if (!strcmp(w[XS_WATCH_TOKEN], "inject"))
                check_inject(&b);
            else
                fe_ev = true;
            free(w);
        }
        if (fe_ev && !step(&b)) {
            tb_log("backend dir %s is gone: exiting", b.be);
            break;
        }
        if (b.conn)
            tb_conn_serve(b.conn, (p[1].revents & POLLIN) != 0);
    }
    tb_log("served %" PRIu64 " requests; hostile acts: %" PRIu64, b.served,
           b.acts[1] + b.acts[2] + b.acts[3] + b.acts[4] + b.acts[5] + b.acts[6] + b.acts[7] +
               b.acts[8] + b.acts[9] + b.acts[10]);
out:
    disconnect(&b);
    if (stop && b.xs)
        tb_set_state(&b, XenbusStateClosed);
    if (b.xce)
        xenevtchn_close(b.xce);
    if (b.xgt)
        xengnttab_close(b.xgt);
    tb_store_close(b.store);
    if (b.xs)
        xs_close(b.xs);
    return rc;
}
