/* lxcreate.c - the libxl driver's create in a child process (lxcreate.h). */
#define _GNU_SOURCE
#include "lxcreate.h"

#include "log.h"
#include "xlcfg.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xentoollog.h>

#define REAP_POLL_MS 20 /* the pipe closed before the child could be reaped */

static void put_result(int fd, const struct sd_lxc_result *r)
{
    ssize_t n;
    do /* one write under PIPE_BUF: whole or not at all */
        n = write(fd, r, sizeof(*r));
    while (n < 0 && errno == EINTR);
}

/* The child's late vifs: the domain runs and is reported already; a vif
 * that cannot be added is logged and the domain stays (its init says what
 * it misses; shadowd's heartbeat and the guests' reports judge it). */
static void add_late_vifs(libxl_ctx *ctx, uint32_t domid, libxl_device_nic *nics, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = libxl_device_nic_add(ctx, domid, &nics[i], NULL);
        if (rc)
            sd_log("domain %u: late vif %d: libxl_device_nic_add: error %d", domid, i, rc);
    }
}

static void __attribute__((noreturn))
child(libxl_ctx *parent, pid_t ppid, int wfd, const struct sd_domconf *d, const char *name,
      bool boost)
{
    libxl_postfork_child_noexec(parent); /* before any other libxl call */
    sd_log_prog("shadowd-priv create");
    /* Never outlive shadowd-priv: its socket to shadowd is open here too. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != ppid)
        _exit(1);
    struct sd_lxc_result r = {.rc = -1, .domid = 0};
    xentoollog_logger_stdiostream *log = xtl_createlogger_stdiostream(stderr, XTL_WARN, 0);
    libxl_ctx *ctx = NULL;
    if (!log || libxl_ctx_alloc(&ctx, LIBXL_VERSION, 0, (xentoollog_logger *)log) != 0) {
        snprintf(r.err, sizeof(r.err), "libxl_ctx_alloc failed in the create's process");
        put_result(wfd, &r);
        _exit(1);
    }
    libxl_domain_config cfg;
    if (sd_xlcfg_load(ctx, d->xl_config, d->name, stderr, &cfg) < 0) {
        snprintf(r.err, sizeof(r.err), "xl config %s does not load (see above)", d->xl_config);
        put_result(wfd, &r);
        _exit(1);
    }
    if (strcmp(name, d->name)) { /* the standby: the same config under its own name */
        free(cfg.c_info.name);
        cfg.c_info.name = strdup(name);
        if (!cfg.c_info.name) {
            snprintf(r.err, sizeof(r.err), "out of memory");
            put_result(wfd, &r);
            _exit(1);
        }
    }
    /* boot-weight: the domain to serve boots at it (not a standby, which
     * boots in the background) until it serves and shadowd settles it. */
    if (d->boot_weight && boost)
        cfg.b_info.sched_params.weight = (int)d->boot_weight;
    /* late-vifs: libxl holds a new domain paused until every vif's hotplug
     * script has run (seconds of a restart under emulation); a driver
     * domain that waits for its uplink boots meanwhile. */
    libxl_device_nic *late = NULL;
    int nlate = 0;
    if (d->late_vifs && cfg.num_nics) {
        late = cfg.nics;
        nlate = cfg.num_nics;
        cfg.nics = NULL;
        cfg.num_nics = 0;
    }
    uint32_t domid = INVALID_DOMID;
    uint64_t t0 = sd_now();
    int rc = libxl_domain_create_new(ctx, &cfg, &domid, NULL, NULL); /* to the end */
    uint64_t took = sd_now() - t0;
    if (rc) {
        snprintf(r.err, sizeof(r.err), "libxl_domain_create_new %s: error %d", name, rc);
        put_result(wfd, &r);
        _exit(1);
    }
    /* libxl_domain_create_new leaves the new domain paused (xl create
     * unpauses it unless -p): start it. */
    rc = libxl_domain_unpause(ctx, domid, NULL);
    if (rc) {
        snprintf(r.err, sizeof(r.err), "libxl_domain_unpause %u: error %d", domid, rc);
        put_result(wfd, &r);
        _exit(1);
    }
    r.rc = 0;
    r.domid = domid;
    put_result(wfd, &r);
    sd_log("'%s' is domain %u: libxl_domain_create_new took %llu ms; unpaused", name, domid,
           (unsigned long long)took);
    add_late_vifs(ctx, domid, late, nlate);
    /* No dispose or ctx_free: the process ends here, and libxl's own
     * children (hotplug scripts) are done when its calls return. */
    _exit(0);
}

int sd_lxc_start(libxl_ctx *parent, const struct sd_domconf *d, const char *name, bool boost,
                 struct sd_lxc *c, char *err, size_t errlen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) { /* CLOEXEC: libxl's hotplug scripts hold no end */
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t ppid = getpid();
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        child(parent, ppid, p[1], d, name, boost);
    }
    close(p[1]);
    if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) { /* cannot fail on a pipe we own */
        snprintf(err, errlen, "fcntl: %s", strerror(errno));
        close(p[0]);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    *c = (struct sd_lxc){.pid = pid, .fd = p[0], .start_ms = sd_now()};
    return 0;
}

static void describe_exit(int st, char *buf, size_t len)
{
    if (WIFSIGNALED(st))
        snprintf(buf, len, "the create's process was killed by signal %d", WTERMSIG(st));
    else
        snprintf(buf, len, "the create's process exited with status %d and no result",
                 WEXITSTATUS(st));
}

int sd_lxc_poll(struct sd_lxc *c, struct sd_lxc_result *res, uint64_t now_ms)
{
    int out = 0;
    while (c->fd >= 0) {
        struct sd_lxc_result r;
        ssize_t n = read(c->fd, &r, sizeof(r));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n == (ssize_t)sizeof(r) && !c->reported) {
            r.err[sizeof(r.err) - 1] = '\0';
            if (r.rc != 0 && !r.err[0])
                snprintf(r.err, sizeof(r.err), "create failed");
            *res = r;
            c->reported = true;
            out |= SD_LXC_RESULT;
            continue;
        }
        if (n > 0) /* a short or second message: not ours to trust */
            continue;
        close(c->fd); /* end of file: the child exited (or read failed) */
        c->fd = -1;
    }
    if (c->fd >= 0 && !c->killed && now_ms - c->start_ms >= SD_LXC_MAX_MS) {
        sd_log("create of a domain (process %d) still running after %u s: killed", (int)c->pid,
               SD_LXC_MAX_MS / 1000u);
        kill(c->pid, SIGKILL);
        c->killed = true;
    }
    if (c->fd < 0 && c->pid > 0) {
        int st = 0;
        pid_t w;
        do
            w = waitpid(c->pid, &st, WNOHANG);
        while (w < 0 && errno == EINTR);
        if (w == 0)
            return out; /* closed, not yet reapable: sd_lxc_timeout asks again soon */
        if (w < 0)
            st = 0; /* reaped by someone else (not in selective-reap mode?): no status */
        c->pid = 0;
        if (!c->reported) {
            memset(res, 0, sizeof(*res));
            res->rc = -1;
            if (c->killed)
                snprintf(res->err, sizeof(res->err), "the create took longer than %u s: killed",
                         SD_LXC_MAX_MS / 1000u);
            else if (w < 0)
                snprintf(res->err, sizeof(res->err), "the create's process ended with no result");
            else
                describe_exit(st, res->err, sizeof(res->err));
            c->reported = true;
            out |= SD_LXC_RESULT;
        }
    }
    if (c->fd < 0 && c->pid == 0)
        out |= SD_LXC_OVER;
    return out;
}

int sd_lxc_timeout(const struct sd_lxc *c, uint64_t now_ms)
{
    if (c->fd < 0)
        return REAP_POLL_MS;
    if (c->killed)
        return -1; /* its pipe closes as it dies */
    uint64_t end = c->start_ms + SD_LXC_MAX_MS;
    return now_ms >= end ? 0 : (int)(end - now_ms);
}

void sd_lxc_abandon(struct sd_lxc *c)
{
    if (c->pid > 0) {
        kill(c->pid, SIGKILL);
        while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
            ;
        c->pid = 0;
    }
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}
