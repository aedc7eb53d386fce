/* be_main.c - a backend process: command line, Xen handles, the event loop. */
#define _GNU_SOURCE
#include "be_internal.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s --backend /local/domain/<self>/backend/<type>/<fe-domid>/<devid>\n"
            "Serves one PV device until its backend dir is removed (exit 0).\n",
            prog);
}

/* Parse /local/domain/<self>/backend/<type>/<fe>/<devid>. */
static int parse_path(struct be_dev *be, const char *path)
{
    char type[32];
    int n = -1;
    if (strlen(path) >= sizeof(be->path) ||
        sscanf(path, "/local/domain/%u/backend/%31[^/]/%u/%u%n", &be->self, type, &be->fe_domid,
               &be->devid, &n) != 4 ||
        n != (int)strlen(path) || strcmp(type, be->ops->type))
        return -1;
    /* No leading zeros, signs or spaces: the path must be canonical. */
    char canon[sizeof(be->path)];
    snprintf(canon, sizeof(canon), "/local/domain/%u/backend/%s/%u/%u", be->self, type,
             be->fe_domid, be->devid);
    if (strcmp(canon, path))
        return -1;
    snprintf(be->path, sizeof(be->path), "%s", path);
    return 0;
}

static void on_xs(void *opaque, int fd, uint32_t events)
{
    (void)fd;
    (void)events;
    struct be_dev *be = opaque;
    char **w;
    while ((w = xs_check_watch(be->xs))) {
        be_xenbus_watch_event(be, w[XS_WATCH_PATH], w[XS_WATCH_TOKEN]);
        free(w);
    }
    if (errno != EAGAIN) {
        BE_LOG(be, "reading xenstore watches: %s", strerror(errno));
        be->exit_code = 1;
        be_loop_stop(be->loop);
    }
}

static void on_evtchn(void *opaque, int fd, uint32_t events)
{
    (void)fd;
    (void)events;
    struct be_dev *be = opaque;
    xenevtchn_port_or_error_t port = xenevtchn_pending(be->xce);
    if (port < 0) {
        if (errno == ECONNRESET) {
            /* The event channel device is gone (on xensim: the daemon, or
             * our domain); its fd stays readable, so going on would spin. */
            BE_LOG(be, "reading pending event channel: %s", strerror(errno));
            be->exit_code = 1;
            be_loop_stop(be->loop);
        } else if (errno != EAGAIN) {
            BE_LOG_RL(be, "reading pending event channel: %s", strerror(errno));
        }
        return;
    }
    /* Unmask first: an event sent while we work is not lost. */
    xenevtchn_unmask(be->xce, port);
    be_ring_dispatch(be, (evtchn_port_t)port);
}

static void on_signal(void *opaque, int fd, uint32_t events)
{
    (void)events;
    struct be_dev *be = opaque;
    struct signalfd_siginfo si;
    if (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        BE_LOG(be, "signal %u: closing", si.ssi_signo);
        be_xenbus_shutdown(be);
        be->exit_code = 0;
        be_loop_stop(be->loop);
    }
}

static int open_handles(struct be_dev *be)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    be->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (be->sigfd < 0) {
        BE_LOG(be, "signalfd: %s", strerror(errno));
        return -1;
    }
    be->loop = be_loop_new();
    if (!be->loop) {
        BE_LOG(be, "creating the event loop: %s", strerror(errno));
        return -1;
    }
    be->xs = xs_open(XS_UNWATCH_FILTER);
    if (!be->xs) {
        BE_LOG(be, "xs_open: cannot reach xenstore: %s", strerror(errno));
        return -1;
    }
    struct xentoollog_logger *xtl = be_xtl_init(be);
    be->gt = xengnttab_open(xtl, 0);
    if (!be->gt) {
        BE_LOG(be, "xengnttab_open: %s", strerror(errno));
        return -1;
    }
    be->xce = xenevtchn_open(xtl, 0);
    if (!be->xce) {
        BE_LOG(be, "xenevtchn_open: %s", strerror(errno));
        return -1;
    }
    if (be_loop_add_fd(be->loop, be->sigfd, on_signal, be) < 0 ||
        be_loop_add_fd(be->loop, xs_fileno(be->xs), on_xs, be) < 0 ||
        be_loop_add_fd(be->loop, xenevtchn_fd(be->xce), on_evtchn, be) < 0) {
        BE_LOG(be, "adding fds to the event loop: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static void close_handles(struct be_dev *be)
{
    if (be->xce)
        xenevtchn_close(be->xce);
    if (be->gt)
        xengnttab_close(be->gt);
    if (be->xs)
        xs_close(be->xs);
    be_loop_free(be->loop);
    if (be->sigfd >= 0)
        close(be->sigfd);
}

int be_main(const struct be_class_ops *ops, void *priv, int argc, char **argv)
{
    static const struct option opts[] = {{"backend", required_argument, NULL, 'b'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *path = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "b:h", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            path = optarg;
            break;
        case 'h':
            usage(stdout, ops->prog);
            return 0;
        default:
            usage(stderr, ops->prog);
            return 2;
        }
    }
    if (!path || optind != argc) {
        usage(stderr, ops->prog);
        return 2;
    }
    struct be_dev *be = calloc(1, sizeof(*be));
    if (!be) {
        fprintf(stderr, "%s: out of memory\n", ops->prog);
        return 1;
    }
    be->ops = ops;
    be->priv = priv;
    be->sigfd = -1;
    be->exit_code = 1;
    if (parse_path(be, path) < 0) {
        fprintf(stderr,
                "%s: --backend %s: not a path /local/domain/<self>/backend/%s/<fe>/<devid>\n",
                ops->prog, path, ops->type);
        free(be);
        return 2;
    }
    be_log_init(&be->log, ops->prog, be->fe_domid, be->devid);
    if (open_handles(be) == 0 && be_xenbus_start(be) == 0) {
        if (be_loop_run(be->loop) < 0) {
            BE_LOG(be, "event loop: %s", strerror(errno));
            be->exit_code = 1;
        }
    }
    if (be->connected)
        be->ops->disconnect(be);
    be->ops->teardown(be);
    close_handles(be);
    int rc = be->exit_code;
    free(be);
    return rc;
}
