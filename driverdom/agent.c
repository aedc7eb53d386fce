/* understudy-agent - runs in a driver domain: starts one backend process per
 * backend dir under /local/domain/<self>/backend/<type>/<fe>/<devid> (as
 * `xl devd` does for its backends), restarts a backend that dies (the
 * cheapest recovery), writes a heartbeat for shadowd, and pets /dev/watchdog
 * where xen_wdt provides one.
 *
 *   understudy-agent [--handler TYPE=PROGRAM]... [--heartbeat-ms N]
 *                    [--restart-budget N] [--restart-window-ms N]
 *
 * Default handlers: vbd=blkback and vif=netback beside this program.
 */
#define _GNU_SOURCE
#include "supervisor.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
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

int main(int argc, char **argv)
{
    struct sup_handler h[SUP_MAX_TYPES];
    unsigned nh = 0, heartbeat_ms = 1000, budget = 5, window_ms = 60000;
    char self[900];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
    self[sl > 0 ? sl : 0] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--handler") && v && strchr(v, '=') && nh < SUP_MAX_TYPES) {
            size_t tl = (size_t)(strchr(v, '=') - v);
            if (tl == 0 || tl >= sizeof(h[nh].type) ||
                strlen(v + tl + 1) >= sizeof(h[nh].program)) {
                fprintf(stderr, "understudy-agent: bad --handler '%s'\n", v);
                return 2;
            }
            memcpy(h[nh].type, v, tl);
            h[nh].type[tl] = 0;
            strcpy(h[nh].program, v + tl + 1);
            nh++;
            i++;
        } else if (!strcmp(a, "--heartbeat-ms") && v && !parse_uint(v, 600000, &heartbeat_ms) &&
                   heartbeat_ms > 0) {
            i++;
        } else if (!strcmp(a, "--restart-budget") && v && !parse_uint(v, 1000, &budget)) {
            i++;
        } else if (!strcmp(a, "--restart-window-ms") && v && !parse_uint(v, 86400000, &window_ms)) {
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
    if (nh == 0) {
        snprintf(h[0].type, sizeof(h[0].type), "vbd");
        snprintf(h[0].program, sizeof(h[0].program), "%s/blkback", self);
        snprintf(h[1].type, sizeof(h[1].type), "vif");
        snprintf(h[1].program, sizeof(h[1].program), "%s/netback", self);
        nh = 2;
    }

    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGCHLD);
    sigaddset(&ss, SIGTERM);
    sigaddset(&ss, SIGINT);
    sigprocmask(SIG_BLOCK, &ss, NULL);
    int sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);

    struct xs_handle *xs = xs_open(0);
    if (!xs || sfd < 0) {
        fprintf(stderr, "understudy-agent: xs_open: %s\n", strerror(errno));
        return 1;
    }
    uint64_t domid;
    if (xsu_read_u64(xs, XBT_NULL, "domid", NULL, 0x7FEF, &domid) < 0) {
        fprintf(stderr, "understudy-agent: cannot read my domid: %s\n", strerror(errno));
        return 1;
    }
    char mydir[64], base[96];
    snprintf(mydir, sizeof(mydir), "/local/domain/%u", (unsigned)domid);
    snprintf(base, sizeof(base), "%s/backend", mydir);
    struct supervisor *sup = sup_new(h, nh, budget, window_ms);
    if (!sup || !xs_watch(xs, base, WATCH_TOKEN)) {
        fprintf(stderr, "understudy-agent: watch %s: %s\n", base, strerror(errno));
        return 1;
    }
    /* xen_wdt: a domain whose agent stops petting gets a watchdog shutdown. */
    int wdt = open("/dev/watchdog", O_WRONLY | O_CLOEXEC);
    fprintf(stderr, "understudy-agent: domain %u serving %s; heartbeat every %u ms; watchdog %s\n",
            (unsigned)domid, base, heartbeat_ms, wdt >= 0 ? "armed" : "absent");

    uint64_t next_beat = 0;
    int running = 1;
    while (running) {
        uint64_t now = now_ms();
        if (now >= next_beat) {
            if (xsu_printf(xs, XBT_NULL, mydir, USK_DRV_HEARTBEAT, "%llu",
                           (unsigned long long)now) < 0)
                fprintf(stderr, "understudy-agent: heartbeat: %s\n", strerror(errno));
            if (wdt >= 0 && write(wdt, "1", 1) != 1)
                fprintf(stderr, "understudy-agent: /dev/watchdog: %s\n", strerror(errno));
            next_beat = now + heartbeat_ms;
        }
        struct pollfd p[2] = {{.fd = xs_fileno(xs), .events = POLLIN},
                              {.fd = sfd, .events = POLLIN}};
        int r = poll(p, 2, (int)(next_beat - now));
        if (r < 0 && errno != EINTR) {
            fprintf(stderr, "understudy-agent: poll: %s\n", strerror(errno));
            break;
        }
        bool rescan = false;
        if (p[0].revents & POLLIN) {
            unsigned n;
            char **ev = xs_read_watch(xs, &n);
            if (!ev) {
                fprintf(stderr, "understudy-agent: lost xenstore connection\n");
                break;
            }
            free(ev);
            rescan = true;
        }
        if (p[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                if (si.ssi_signo != SIGCHLD) {
                    running = 0;
                    continue;
                }
                int status;
                pid_t pid;
                while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                    bool abnormal;
                    if (sup_child_exited(sup, pid, status, &abnormal) && abnormal)
                        rescan = true; /* restart it, within its budget */
                }
            }
        }
        if (rescan && running)
            scan(xs, sup, base);
    }
    sup_stop_all(sup);
    if (wdt >= 0) {
        /* The magic close disarms xen_wdt on an orderly stop. */
        if (write(wdt, "V", 1) != 1)
            fprintf(stderr, "understudy-agent: /dev/watchdog: %s\n", strerror(errno));
        close(wdt);
    }
    sup_free(sup);
    xs_close(xs);
    return 0;
}
