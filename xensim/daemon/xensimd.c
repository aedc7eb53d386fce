/* xensimd - the xensim daemon: stands in for the Xen hypervisor (domains,
 * grant tables, event channels) and xenstored, for one simulated host.
 *
 *   xensimd --dir DIR --simlib LIBDIR [--ready-fd N]
 *
 * Normally started by `xensim start`, which waits for the "ready" line on N.
 */
#define _GNU_SOURCE
#include "ctl_server.h"
#include "domain.h"
#include "hyp.h"
#include "evloop.h"
#include "xs_server.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

static struct evloop *L;

static void on_signal(void *opaque, int fd, uint32_t events)
{
    (void)opaque;
    (void)events;
    struct signalfd_siginfo si;
    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo == SIGCHLD)
            dom_reap_children();
        else
            evloop_stop(L);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: xensimd --dir DIR --simlib LIBDIR [--ready-fd N]\n");
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *simlib = NULL;
    int ready_fd = -1;
    static const struct option opts[] = {{"dir", required_argument, NULL, 'd'},
                                         {"simlib", required_argument, NULL, 'l'},
                                         {"ready-fd", required_argument, NULL, 'r'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "d:l:r:h", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            dir = optarg;
            break;
        case 'l':
            simlib = optarg;
            break;
        case 'r': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > INT_MAX) {
                fprintf(stderr, "xensimd: --ready-fd: not a file descriptor: '%s'\n", optarg);
                return 2;
            }
            ready_fd = (int)v;
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!dir || !simlib || optind != argc) {
        usage(stderr);
        return 2;
    }
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "xensimd: mkdir %s: %s\n", dir, strerror(errno));
        return 1;
    }

    /* Reap every descendant of a domain, even ones that left its process group. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    signal(SIGPIPE, SIG_IGN);
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGCHLD);
    sigaddset(&ss, SIGTERM);
    sigaddset(&ss, SIGINT);
    sigaddset(&ss, SIGHUP);
    sigprocmask(SIG_BLOCK, &ss, NULL);
    int sfd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);

    char ctl[PATH_MAX], pidfile[PATH_MAX];
    snprintf(ctl, sizeof(ctl), "%s/ctl.sock", dir);
    snprintf(pidfile, sizeof(pidfile), "%s/xensimd.pid", dir);

    L = evloop_create();
    if (!L || sfd < 0 || evloop_fd_create(L, sfd, EPOLLIN, on_signal, NULL) < 0) {
        fprintf(stderr, "xensimd: event loop: %s\n", strerror(errno));
        return 1;
    }
    if (xs_server_init(L) < 0 || hyp_server_init(L) < 0) {
        fprintf(stderr, "xensimd: init: %s\n", strerror(errno));
        return 1;
    }
    if (dom_init(L, dir, simlib) < 0) {
        fprintf(stderr, "xensimd: dom0 in %s: %s\n", dir, strerror(errno));
        return 1;
    }
    if (ctl_server_init(L, ctl) < 0) {
        fprintf(stderr, "xensimd: %s: %s\n", ctl, strerror(errno));
        return 1;
    }
    FILE *pf = fopen(pidfile, "w");
    if (pf) {
        fprintf(pf, "%d\n", (int)getpid());
        fclose(pf);
    }
    if (ready_fd >= 0) {
        if (write(ready_fd, "ready\n", 6) != 6)
            fprintf(stderr, "xensimd: ready-fd: %s\n", strerror(errno));
        close(ready_fd);
    }

    int rc = evloop_run(L) < 0 ? 1 : 0;

    dom_destroy_all();
    ctl_server_fini();
    hyp_server_fini();
    xs_server_fini();
    char d0[PATH_MAX];
    snprintf(d0, sizeof(d0), "%s/dom0/xenstore.sock", dir);
    unlink(d0);
    snprintf(d0, sizeof(d0), "%s/dom0/hyp.sock", dir);
    unlink(d0);
    snprintf(d0, sizeof(d0), "%s/dom0", dir);
    rmdir(d0);
    unlink(pidfile);
    evloop_delete(L);
    close(sfd);
    return rc;
}
