/* shadowd - the dom0 service that keeps driver domains alive: it detects a
 * failed driver domain, restarts it and rewires every guest device to the
 * new one. See dom0-tools/README.md.
 *
 *   shadowd [-c FILE]        run (in the foreground; systemd supervises it)
 *   shadowd -n [-v] [-c FILE] check the configuration and exit
 *
 * One thread, one poll loop: the xenstore fd, a signalfd, the control and
 * metrics sockets and their clients, and the channel to shadowd-priv, the
 * privileged part that holds the domain drivers (privchan.h); timers are
 * the domains' own deadlines, on CLOCK_MONOTONIC. shadowd starts
 * shadowd-priv before it opens anything a peer can reach, and drops root
 * (privdrop.h) before it reads anything a peer wrote. Under systemd
 * (Type=notify) it says when it is ready, its status and that it is alive
 * from the loop (service.h). */
#define _GNU_SOURCE
#include "sbuf.h"
#include "ctl.h"
#include "detect.h"
#include "dom.h"
#include "drv_priv.h"
#include "events.h"
#include "fence.h"
#include "hotsb.h"
#include "instance.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "persist.h"
#include "privchan.h"
#include "privdrop.h"
#include "record.h"
#include "recover.h"
#include "rewire.h"
#include "service.h"
#include "standby.h"
#include "store.h"

#include "xs_util.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define DEFAULT_CONF   "/etc/understudy/shadowd.conf"
#define MAX_CLIENTS    16
#define MAX_REQUEST    1024
#define CLIENT_TIMEOUT 5000
#define SCAN_EVERY_MS  30000
#define MAX_POLL_MS    1000

enum ckind { C_CTL, C_METRICS };

struct client {
    int fd;
    enum ckind kind;
    char in[MAX_REQUEST];
    size_t inlen;
    struct sbuf out;
    size_t outoff;
    bool replying;
    uint64_t deadline;
};

static struct client clients[MAX_CLIENTS];
static unsigned nclients;

static void usage(FILE *f)
{
    fprintf(f, "usage: shadowd [-c FILE]             run, watching over the configured driver "
               "domains\n"
               "       shadowd -n [-v] [-c FILE]     check FILE and exit (-v: print it as "
               "understood)\n"
               "FILE defaults to " DEFAULT_CONF "; see dom0-tools/README.md.\n");
}

/* -n: shadowd-priv checks the config, since the driver-specific settings
 * (an xl config, a domain XML) are read with the drivers' libraries. */
static int check_only(const char *path, bool verbose)
{
    char priv[4096], err[256];
    if (sd_privchan_path(priv, sizeof(priv), err, sizeof(err)) < 0) {
        fprintf(stderr, "shadowd: %s\n", err);
        return 1;
    }
    char *argv[] = {"shadowd-priv", "-n", "-c", (char *)path, verbose ? "-v" : NULL, NULL};
    fflush(NULL);
    execv(priv, argv);
    fprintf(stderr, "shadowd: exec %s: %s\n", priv, strerror(errno));
    return 1;
}

static int listen_on(const char *dir, const char *name, mode_t mode)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", dir, name) >= (int)sizeof(a.sun_path)) {
        sd_log("socket path %s/%s is too long", dir, name);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        sd_log("socket: %s", strerror(errno));
        return -1;
    }
    unlink(a.sun_path);
    mode_t old = umask(0777 & ~mode);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
    umask(old);
    if (rc < 0 || listen(fd, 16) < 0) {
        sd_log("listen on %s: %s", a.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static void client_close(unsigned i)
{
    close(clients[i].fd);
    sbuf_free(&clients[i].out);
    clients[i] = clients[--nclients];
}

static void accept_on(int lfd, enum ckind kind)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (nclients == MAX_CLIENTS) {
            static const char busy[] = "error: too many clients\n";
            if (write(fd, busy, sizeof(busy) - 1) < 0) {
                /* nothing to do: the client goes either way */
            }
            close(fd);
            continue;
        }
        struct client *c = &clients[nclients++];
        memset(c, 0, sizeof(*c));
        c->fd = fd;
        c->kind = kind;
        c->deadline = sd_now() + CLIENT_TIMEOUT;
    }
}

/* A complete request in c->in? Then build the reply. */
static void client_request(struct sd *sd, struct client *c)
{
    char *nl = memchr(c->in, '\n', c->inlen);
    if (c->kind == C_CTL) {
        if (!nl)
            return;
        *nl = 0;
        sd_ctl_command(sd, c->in, &c->out);
    } else {
        /* HTTP (curl --unix-socket, a scrape proxy) or one line. */
        bool http = c->inlen >= 4 && !memcmp(c->in, "GET ", 4);
        if (http && !memmem(c->in, c->inlen, "\r\n\r\n", 4) && !memmem(c->in, c->inlen, "\n\n", 2))
            return;
        if (!http && !nl)
            return;
        struct sbuf body = {0};
        sd_metrics(sd, &body);
        if (http)
            sbuf_printf(&c->out,
                        "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                        "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                        body.len);
        sbuf_add(&c->out, sbuf_str(&body), body.len);
        sbuf_free(&body);
    }
    c->replying = true;
}

/* Returns false when the client is done. */
static bool client_io(struct sd *sd, struct client *c, short rev)
{
    if (!c->replying && (rev & (POLLIN | POLLHUP))) {
        ssize_t n = read(c->fd, c->in + c->inlen, sizeof(c->in) - 1 - c->inlen);
        if (n <= 0)
            return n < 0 && (errno == EAGAIN || errno == EINTR);
        c->inlen += (size_t)n;
        c->in[c->inlen] = 0;
        client_request(sd, c);
        if (!c->replying && c->inlen == sizeof(c->in) - 1) {
            sbuf_printf(&c->out, "error: request too long\n");
            c->replying = true;
        }
    }
    if (c->replying) {
        if (c->out.oom)
            return false;
        while (c->outoff < c->out.len) {
            ssize_t n = write(c->fd, c->out.s + c->outoff, c->out.len - c->outoff);
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return true;
            if (n <= 0)
                return false;
            c->outoff += (size_t)n;
        }
        return false;
    }
    return true;
}

static void drv_done(void *ctx, void *arg, enum sd_drv_op op, int rc, unsigned domid,
                     const char *err)
{
    (void)ctx;
    struct sd_inst *in = arg; /* the instance the operation was for */
    if (in->role == SD_ROLE_STANDBY)
        sd_standby_done_op(in->dom, op, rc, domid, err);
    else if (in->role == SD_ROLE_FENCED)
        sd_reap_done_op(in->dom, op, rc, err);
    else
        sd_recover_done_op(in->dom, op, rc, domid, err);
}

static void drv_changed(void *ctx, unsigned domid)
{
    sd_detect_changed(ctx, domid);
}

static void tick(struct sd *sd)
{
    sd_detect_look(sd);
    uint64_t now = sd_now();
    for (unsigned i = 0; i < sd->ndoms; i++) {
        struct sd_dom *d = &sd->doms[i];
        if (d->startup_pending) {
            if (now >= d->startup_retry_ms)
                sd_recover_startup(d);
            continue;
        }
        if (d->scan_due || (d->state == DS_UP && now >= d->next_scan_ms)) {
            sd_record_scan(d);
            d->next_scan_ms = now + SCAN_EVERY_MS;
        }
        sd_detect_tick(d, now);
        sd_recover_tick(d, sd_now());
        sd_reap_tick(d, sd_now()); /* after the recovery's: right after a switch */
        sd_standby_tick(d, sd_now());
        sd_hot_tick(d, sd_now());
        sd_rewire_perms_tick(d);
        if (d->devs_dirty)
            sd_persist_save_devs(d);
    }
}

static int run(struct sd *sd, struct sd_privchan *ch, int sfd, int ctl_fd, int met_fd)
{
    struct pollfd p[5 + MAX_CLIENTS];
    char why[300];
    for (;;) {
        tick(sd);
        if (sd_privchan_lost(ch, why, sizeof(why))) {
            sd_log("the privileged part is gone (%s): exiting so that the service manager "
                   "restarts shadowd; state is in %s",
                   why, sd->conf->state_dir);
            sd_service_exiting("the privileged part (shadowd-priv) is gone");
            return 1;
        }
        if (sd->xs_lost) {
            sd_log("exiting so that the service manager restarts shadowd; state is in %s",
                   sd->conf->state_dir);
            sd_service_exiting("the connection to xenstored is lost");
            return 1;
        }
        /* From the loop only: a loop that hangs stops the watchdog's pings. */
        sd_service_tick(sd, sd_now());
        uint64_t now = sd_now(), wake = now + MAX_POLL_MS;
        for (unsigned i = 0; i < sd->ndoms; i++) {
            uint64_t w = sd_dom_wake(&sd->doms[i]);
            if (w < wake)
                wake = w;
        }
        for (unsigned i = 0; i < nclients; i++)
            if (clients[i].deadline < wake)
                wake = clients[i].deadline;
        uint64_t sw = sd_service_wake(sd);
        if (sw < wake)
            wake = sw;
        int timeout = wake > now ? (int)(wake - now) : 0;
        int n = 0;
        p[n++] = (struct pollfd){.fd = xs_fileno(sd->xs), .events = POLLIN};
        p[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
        p[n++] = (struct pollfd){.fd = ctl_fd, .events = POLLIN};
        p[n++] = (struct pollfd){.fd = met_fd, .events = POLLIN};
        int first_client = n;
        for (unsigned i = 0; i < nclients; i++)
            p[n++] = (struct pollfd){.fd = clients[i].fd,
                                     .events = clients[i].replying ? POLLOUT : POLLIN};
        int priv = n++;
        sd_privchan_prepoll(ch, &p[priv], &timeout);
        int r = poll(p, (nfds_t)n, timeout);
        if (r < 0 && errno != EINTR) {
            sd_log("poll: %s", strerror(errno));
            return 1;
        }
        sd_privchan_postpoll(ch, &p[priv]);
        if (r <= 0)
            goto timers;
        if (p[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                if (si.ssi_signo == SIGHUP) {
                    sd_log("SIGHUP: shadowd does not reload its configuration; restart it to "
                           "apply a new one (nothing is lost: state is in %s)",
                           sd->conf->state_dir);
                    continue;
                }
                sd_log("signal %u: stopping; driver domains keep running", si.ssi_signo);
                sd_service_stopping();
                return 0;
            }
        }
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
            sd_events_dispatch(sd);
        /* Clients: walk backwards, closing may move the last one into i. */
        for (unsigned i = nclients; i-- > 0;) {
            short rev = p[first_client + (int)i].revents;
            if ((int)i + first_client >= n)
                continue;
            if (rev && !client_io(sd, &clients[i], rev))
                client_close(i);
        }
        if (p[2].revents & POLLIN)
            accept_on(ctl_fd, C_CTL);
        if (p[3].revents & POLLIN)
            accept_on(met_fd, C_METRICS);
    timers:
        now = sd_now();
        for (unsigned i = nclients; i-- > 0;)
            if (clients[i].deadline <= now)
                client_close(i);
    }
}

/* The command line: 0 and the options, or the exit code (usage, -h). */
struct args {
    const char *path;
    bool check, verbose;
};

static int parse_args(int argc, char **argv, struct args *a)
{
    static const struct option lo[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int o;
    *a = (struct args){.path = DEFAULT_CONF};
    while ((o = getopt_long(argc, argv, "c:nvh", lo, NULL)) != -1) {
        switch (o) {
        case 'c':
            a->path = optarg;
            break;
        case 'n':
            a->check = true;
            break;
        case 'v':
            a->verbose = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    return -1; /* go on */
}

/* SIGTERM, SIGINT and SIGHUP arrive on a signalfd, read by the loop. */
static int open_signals(void)
{
    sigset_t ss;
    sigemptyset(&ss);
    sigaddset(&ss, SIGTERM);
    sigaddset(&ss, SIGINT);
    sigaddset(&ss, SIGHUP);
    sigprocmask(SIG_BLOCK, &ss, NULL);
    signal(SIGPIPE, SIG_IGN);
    int fd = signalfd(-1, &ss, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0)
        sd_log("signalfd: %s", strerror(errno));
    return fd;
}

/* One struct sd_dom per configured domain, and one driver per kind used:
 * shadowd-priv's, through the channel. */
static int open_domains(struct sd *sd, struct sd_privchan *ch)
{
    sd->ndoms = sd->conf->ndoms;
    sd->doms = calloc(sd->ndoms, sizeof(*sd->doms));
    if (!sd->doms) {
        sd_log("out of memory");
        return -1;
    }
    for (unsigned i = 0; i < sd->ndoms; i++) {
        struct sd_dom *d = &sd->doms[i];
        d->sd = sd;
        d->idx = i;
        d->conf = &sd->conf->doms[i];
        d->ops = &sd_drv_priv;
        sd_inst_init(&d->srv, d, SD_ROLE_SERVING);
        sd_inst_init(&d->sb.inst, d, SD_ROLE_STANDBY);
        sd_inst_init(&d->reap.inst, d, SD_ROLE_FENCED);
        enum sd_driver_kind k = d->conf->driver;
        if (!sd->drv[k] && !(sd->drv[k] = sd_drv_priv_new(ch, k))) {
            sd_log("out of memory");
            return -1;
        }
        d->drv = sd->drv[k];
    }
    return 0;
}

/* The control and metrics sockets in the run dir. */
static int open_sockets(const struct sd *sd, int *ctl_fd, int *met_fd)
{
    if (mkdir(sd->conf->run_dir, 0755) < 0 && errno != EEXIST) {
        sd_log("run dir %s: %s", sd->conf->run_dir, strerror(errno));
        return -1;
    }
    *ctl_fd = listen_on(sd->conf->run_dir, "shadowd.sock", 0600);
    *met_fd = listen_on(sd->conf->run_dir, "metrics.sock", 0660);
    return *ctl_fd < 0 || *met_fd < 0 ? -1 : 0;
}

/* What the state dir remembers of each domain's devices, watched again. */
static void load_devices(struct sd *sd)
{
    for (unsigned i = 0; i < sd->ndoms; i++) {
        struct sd_dom *d = &sd->doms[i];
        sd_persist_load_devs(d);
        for (unsigned k = 0; k < d->ndevs; k++)
            sd_store_watch_dev(d, d->devs[k]);
        if (d->ndevs)
            sd_dlog(d, "%u devices recorded from %s", d->ndevs, sd->conf->state_dir);
    }
}

/* Everything open_* and load_devices made; safe on a half-built sd. */
static void close_all(struct sd *sd, struct sd_privchan *ch, int sfd, int ctl_fd, int met_fd)
{
    while (nclients)
        client_close(nclients - 1);
    if (met_fd >= 0)
        close(met_fd);
    if (ctl_fd >= 0)
        close(ctl_fd);
    for (unsigned i = 0; sd->doms && i < sd->ndoms; i++) {
        struct sd_dom *d = &sd->doms[i];
        for (unsigned k = 0; k < d->ndevs; k++)
            sd_dev_free(d->devs[k]);
        free(d->devs);
    }
    sd_xspool_close(sd);
    sd_store_close(sd);
    for (int k = 0; k < SD_DRIVER_KINDS; k++)
        if (sd->drv[k])
            sd_drv_priv.close(sd->drv[k]);
    sd_privchan_close(ch);
    if (sd->state_fd >= 0)
        close(sd->state_fd);
    free(sd->doms);
    if (sfd >= 0)
        close(sfd);
    sd_conf_free(sd->conf);
}

int main(int argc, char **argv)
{
    uint64_t t0 = sd_now();
    sd_log_start(t0);
    struct args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.check)
        return check_only(a.path, a.verbose);

    struct sd sd = {.started_ms = t0, .state_fd = -1};
    sd.conf = sd_conf_load(a.path, stderr);
    if (!sd.conf)
        return 1;
    rc = 1;
    int ctl_fd = -1, met_fd = -1, sfd = -1;
    /* First the privileged part, which opens the drivers, while nothing a
     * peer can reach is open; then, still as root, what the rest needs
     * (the state dir, xenstore, the sockets); then root goes, before
     * anything a peer wrote is read. */
    struct sd_drv_hooks hooks = {.done = drv_done, .changed = drv_changed, .ctx = &sd};
    char err[256] = "";
    /* Before the fork: shadowd-priv must not inherit $NOTIFY_SOCKET (only
     * the main process speaks to systemd, NotifyAccess=main). */
    sd_notify_init();
    struct sd_privchan *ch = sd_privchan_start(a.path, &hooks, err, sizeof(err));
    if (!ch) {
        sd_log("%s", err);
        goto out;
    }
    sfd = open_signals();
    if (sfd < 0 || sd_persist_init(&sd) < 0 || sd_store_open(&sd) < 0)
        goto out;
    sd_xspool_open(&sd); /* with the main connection: before the privileges are dropped */
    if (open_sockets(&sd, &ctl_fd, &met_fd) < 0 || sd_privdrop(sd.conf, sd.state_fd) < 0)
        goto out;
    sd_persist_history_load(&sd);
    if (open_domains(&sd, ch) < 0)
        goto out;
    load_devices(&sd);
    sd_log("watching %u driver domains (config %s, state %s, sockets in %s; drivers in "
           "shadowd-priv, pid %d)",
           sd.ndoms, a.path, sd.conf->state_dir, sd.conf->run_dir, sd_privchan_pid(ch));
    for (unsigned i = 0; i < sd.ndoms; i++)
        sd_recover_startup(&sd.doms[i]);
    rc = run(&sd, ch, sfd, ctl_fd, met_fd);
    for (unsigned i = 0; i < sd.ndoms; i++)
        if (sd.doms[i].devs_dirty)
            sd_persist_save_devs(&sd.doms[i]);
out:
    close_all(&sd, ch, sfd, ctl_fd, met_fd);
    sd_notify_close();
    return rc;
}
