/* understudy-agent - runs in a driver domain: starts one backend process per
 * backend dir under /local/domain/<self>/backend/<type>/<fe>/<devid> (as
 * `xl devd` does for its backends), restarts a backend that dies (the
 * cheapest recovery), writes a heartbeat for shadowd, and pets /dev/watchdog
 * where xen_wdt provides one.
 *
 *   understudy-agent [--handler TYPE=PROGRAM]... [--heartbeat-ms N]
 *                    [--restart-budget N] [--restart-window-ms N]
 *
 * Default handlers: vbd=blkback, vif=netback and vsnd=sndback beside this
 * program.
 */
#define _GNU_SOURCE
#include "supervisor.h"
#include "pv-keys.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#define WATCH_TOKEN "understudy-agent"

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static int parse_uint(const char *s, unsigned max, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || v > max)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* Walk backend/<type>/<fe>/<devid> and make sure each dir has its backend. */
static void scan(struct xs_handle *xs, struct supervisor *sup, const char *base)
{
    sup_mark_all_unseen(sup);
    unsigned ntypes = 0;
    char **types = xs_directory(xs, XBT_NULL, base, &ntypes);
    for (unsigned t = 0; types && t < ntypes; t++) {
        if (!sup_handler_for(sup, types[t]))
            continue;
        char tdir[1024];
        if (snprintf(tdir, sizeof(tdir), "%s/%s", base, types[t]) >= (int)sizeof(tdir))
            continue;
        unsigned nfe = 0;
        char **fes = xs_directory(xs, XBT_NULL, tdir, &nfe);
        for (unsigned f = 0; fes && f < nfe; f++) {
            char fdir[2048];
            if (snprintf(fdir, sizeof(fdir), "%s/%s", tdir, fes[f]) >= (int)sizeof(fdir))
                continue;
            unsigned ndev = 0;
            char **devs = xs_directory(xs, XBT_NULL, fdir, &ndev);
            for (unsigned d = 0; devs && d < ndev; d++) {
                char ddir[3072];
                if (snprintf(ddir, sizeof(ddir), "%s/%s", fdir, devs[d]) >= (int)sizeof(ddir))
                    continue;
                sup_ensure(sup, types[t], ddir, now_ms());
            }
            free(devs);
        }
        free(fes);
    }
    free(types);
    sup_forget_unseen(sup);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: understudy-agent [--handler TYPE=PROGRAM]... [--heartbeat-ms N]\n"
               "                        [--restart-budget N] [--restart-window-ms N]\n");
}

struct opts {
    struct sup_handler h[SUP_MAX_TYPES];
    unsigned nh, heartbeat_ms, budget, window_ms;
};

/* The command line: -1 to go on, or the exit code (usage, --help). */
static int parse_args(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--handler") && v && strchr(v, '=') && o->nh < SUP_MAX_TYPES) {
            struct sup_handler *h = &o->h[o->nh];
            size_t tl = (size_t)(strchr(v, '=') - v);
            if (tl == 0 || tl >= sizeof(h->type) || strlen(v + tl + 1) >= sizeof(h->program)) {
                fprintf(stderr, "understudy-agent: bad --handler '%s'\n", v);
                return 2;
            }
            memcpy(h->type, v, tl);
            h->type[tl] = 0;
            strcpy(h->program, v + tl + 1);
            o->nh++;
            i++;
        } else if (!strcmp(a, "--heartbeat-ms") && v && !parse_uint(v, 600000, &o->heartbeat_ms) &&
                   o->heartbeat_ms > 0) {
            i++;
        } else if (!strcmp(a, "--restart-budget") && v && !parse_uint(v, 1000, &o->budget)) {
            i++;
        } else if (!strcmp(a, "--restart-window-ms") && v &&
                   !parse_uint(v, 86400000, &o->window_ms)) {
            i++;
        } else if (!strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "understudy-agent: bad argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    return -1;
}

/* No --handler: blkback, netback and sndback from beside this program. */
static void default_handlers(struct opts *o)
{
    char self[900];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[sl > 0 ? sl : 0] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    snprintf(o->h[0].type, sizeof(o->h[0].type), "vbd");
    snprintf(o->h[0].program, sizeof(o->h[0].program), "%s/blkback", self);
    snprintf(o->h[1].type, sizeof(o->h[1].type), "vif");
    snprintf(o->h[1].program, sizeof(o->h[1].program), "%s/netback", self);
    snprintf(o->h[2].type, sizeof(o->h[2].type), "vsnd");
    snprintf(o->h[2].program, sizeof(o->h[2].program), "%s/sndback", self);
    o->nh = 3;
}

/* The running agent: what the loop polls and writes. */
struct agent {
    struct xs_handle *xs;
    struct supervisor *sup;
    int sfd, wdt;
    char mydir[64], base[96]; /* /local/domain/<self>, and its backend dir */
    unsigned heartbeat_ms;
    bool running;
};

/* Signals on a signalfd, xenstore, our domid, the backend-dir watch, and
 * the watchdog. 0, or -1 with the reason printed. */
static int agent_open(struct agent *ag, const struct opts *o)
{
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGCHLD);
    sigaddset(&ss, SIGTERM);
    sigaddset(&ss, SIGINT);
    sigprocmask(SIG_BLOCK, &ss, NULL);
    ag->sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
    ag->xs = xs_open(0);
    if (!ag->xs || ag->sfd < 0) {
        fprintf(stderr, "understudy-agent: xs_open: %s\n", strerror(errno));
        return -1;
    }
    uint64_t domid;
    if (xsu_read_u64(ag->xs, XBT_NULL, "domid", NULL, 0x7FEF, &domid) < 0) {
        fprintf(stderr, "understudy-agent: cannot read my domid: %s\n", strerror(errno));
        return -1;
    }
    snprintf(ag->mydir, sizeof(ag->mydir), "/local/domain/%u", (unsigned)domid);
    snprintf(ag->base, sizeof(ag->base), "%s/" PVK_BACKEND, ag->mydir);
    ag->sup = sup_new(o->h, o->nh, o->budget, o->window_ms);
    if (!ag->sup || !xs_watch(ag->xs, ag->base, WATCH_TOKEN)) {
        fprintf(stderr, "understudy-agent: watch %s: %s\n", ag->base, strerror(errno));
        return -1;
    }
    /* xen_wdt: a domain whose agent stops petting gets a watchdog shutdown. */
    ag->wdt = open("/dev/watchdog", O_WRONLY | O_CLOEXEC);
    ag->heartbeat_ms = o->heartbeat_ms;
    ag->running = true;
    fprintf(stderr, "understudy-agent: domain %u serving %s; heartbeat every %u ms; watchdog %s\n",
            (unsigned)domid, ag->base, o->heartbeat_ms, ag->wdt >= 0 ? "armed" : "absent");
    return 0;
}

/* The heartbeat for shadowd, and a pet for xen_wdt. */
static void beat(struct agent *ag, uint64_t now)
{
    if (xsu_printf(ag->xs, XBT_NULL, ag->mydir, USK_DRV_HEARTBEAT, "%llu",
                   (unsigned long long)now) < 0)
        fprintf(stderr, "understudy-agent: heartbeat: %s\n", strerror(errno));
    if (ag->wdt >= 0 && write(ag->wdt, "1", 1) != 1)
        fprintf(stderr, "understudy-agent: /dev/watchdog: %s\n", strerror(errno));
}

/* SIGCHLD: reap; SIGTERM, SIGINT: stop. True if a backend died abnormally. */
static bool on_signals(struct agent *ag)
{
    bool rescan = false;
    struct signalfd_siginfo si;
    while (read(ag->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo != SIGCHLD) {
            ag->running = false;
            continue;
        }
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            bool abnormal;
            if (sup_child_exited(ag->sup, pid, status, &abnormal) && abnormal)
                rescan = true; /* restart it, within its budget */
        }
    }
    return rescan;
}

/* A watch event's path under base: the backend dir it falls in
 * (base/<type>/<fe>/<devid>, *exact if the path is that dir itself), or 0
 * for base itself, a type or a frontend dir, or a path not under base. */
static int event_dir(const char *base, const char *path, char *type, size_t tlen, char *ddir,
                     size_t dlen, bool *exact)
{
    size_t bl = strlen(base);
    if (strncmp(path, base, bl) || path[bl] != '/')
        return 0;
    const char *p = path + bl + 1, *c[3];
    for (int i = 0; i < 3; i++) {
        c[i] = p;
        p = strchr(p, '/');
        if (i < 2 && !p)
            return 0;
        if (p)
            p++;
    }
    size_t typelen = (size_t)(c[1] - c[0] - 1);
    if (!typelen || typelen >= tlen || !*c[2] || c[2][0] == '/')
        return 0;
    memcpy(type, c[0], typelen);
    type[typelen] = 0;
    size_t dl = p ? (size_t)(p - 1 - path) : strlen(path);
    if (dl >= dlen)
        return 0;
    memcpy(ddir, path, dl);
    ddir[dl] = 0;
    *exact = !p;
    return 1;
}

/* One watch event. The toolstack's and the backends' own writes inside a
 * dir already served need nothing; a dir created or removed is looked at
 * alone; anything above a dir (base, a type, a frontend's dir) rescans. A
 * full scan per event read every frontend's dir for every key any backend
 * wrote: N^2 requests for N devices (bench/README.md, "Host scale"). */
static void on_event(struct agent *ag, const char *path)
{
    char type[16], ddir[3072];
    bool exact;
    if (!event_dir(ag->base, path, type, sizeof(type), ddir, sizeof(ddir), &exact)) {
        scan(ag->xs, ag->sup, ag->base);
        return;
    }
    if (!sup_handler_for(ag->sup, type) || (!exact && sup_knows(ag->sup, ddir)))
        return;
    unsigned len;
    char *v = xs_read(ag->xs, XBT_NULL, ddir, &len);
    if (v) {
        free(v);
        sup_ensure(ag->sup, type, ddir, now_ms());
    } else if (errno == ENOENT) {
        sup_forget(ag->sup, ddir);
    }
}

static void agent_run(struct agent *ag)
{
    uint64_t next_beat = 0;
    while (ag->running) {
        uint64_t now = now_ms();
        if (now >= next_beat) {
            beat(ag, now);
            next_beat = now + ag->heartbeat_ms;
        }
        struct pollfd p[2] = {{.fd = xs_fileno(ag->xs), .events = POLLIN},
                              {.fd = ag->sfd, .events = POLLIN}};
        int r = poll(p, 2, (int)(next_beat - now));
        if (r < 0 && errno != EINTR) {
            fprintf(stderr, "understudy-agent: poll: %s\n", strerror(errno));
            break;
        }
        bool rescan = false;
        if (p[0].revents & POLLIN) {
            unsigned n;
            char **ev = xs_read_watch(ag->xs, &n);
            if (!ev) {
                fprintf(stderr, "understudy-agent: lost xenstore connection\n");
                break;
            }
            if (ag->running)
                on_event(ag, ev[XS_WATCH_PATH]);
            free(ev);
        }
        if ((p[1].revents & POLLIN) && on_signals(ag))
            rescan = true;
        if (rescan && ag->running)
            scan(ag->xs, ag->sup, ag->base);
    }
}

static void agent_close(struct agent *ag)
{
    sup_stop_all(ag->sup);
    if (ag->wdt >= 0) {
        /* The magic close disarms xen_wdt on an orderly stop. */
        if (write(ag->wdt, "V", 1) != 1)
            fprintf(stderr, "understudy-agent: /dev/watchdog: %s\n", strerror(errno));
        close(ag->wdt);
    }
    sup_free(ag->sup);
    xs_close(ag->xs);
}

int main(int argc, char **argv)
{
    struct opts o = {.heartbeat_ms = 1000, .budget = 5, .window_ms = 60000};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (o.nh == 0)
        default_handlers(&o);
    struct agent ag = {.sfd = -1, .wdt = -1};
    if (agent_open(&ag, &o) < 0)
        return 1;
    agent_run(&ag);
    agent_close(&ag);
    return 0;
}
