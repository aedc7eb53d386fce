/* shadowd-priv - the privileged part of shadowd: it alone holds the domain
 * drivers (libxl, libvirt, the simulator's control socket) and answers
 * shadowd's typed requests (privmsg.h) over one SOCK_SEQPACKET socket.
 * Every request is checked (privmsg.c: its shape; privcheck.c: the names
 * and domains of shadowd.conf, which it reads itself) and a refused one is
 * logged, answered with an error and does nothing. See dom0-tools/README.md,
 * "Privilege separation".
 *
 *   shadowd-priv --fd N [--t0 MS] [-c FILE]   serve shadowd on fd N (shadowd
 *                                   starts it; log stamps count from its t0)
 *   shadowd-priv -n [-v] [-c FILE]  check FILE and exit (what shadowd -n runs)
 *
 * One thread, one poll loop: the socket and the drivers' fds (the libxl
 * driver's creates run in child processes of their own: lxcreate.h). It
 * exits when shadowd closes the socket (or dies: PR_SET_PDEATHSIG). */
#define _GNU_SOURCE
#include "drv.h"
#include "log.h"
#include "privcheck.h"
#include "privmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DEFAULT_CONF "/etc/understudy/shadowd.conf"
#define MAX_OPS      64 /* asynchronous operations in flight */
#define MAX_DRV_FDS  64

struct privd;

/* The hooks' context of one driver kind. */
struct kctx {
    struct privd *p;
    enum sd_driver_kind kind;
};

/* A create or destroy in flight: the arg the driver gets back in done(). */
struct pop {
    bool used;
    uint32_t seq;
    enum sd_driver_kind kind;
};

struct privd {
    struct sd_conf *conf;
    int fd;
    bool lost;
    const struct sd_drv_ops *ops[SD_DRIVER_KINDS];
    struct sd_drv *drv[SD_DRIVER_KINDS];
    struct kctx kctx[SD_DRIVER_KINDS];
    struct sd_drv_hooks hooks[SD_DRIVER_KINDS];
    struct pop pops[MAX_OPS];
    struct sd_privown own;
    unsigned long refused;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: shadowd-priv --fd N [-c FILE]    serve shadowd on socket N (shadowd "
               "starts it)\n"
               "       shadowd-priv -n [-v] [-c FILE]  check FILE and exit\n"
               "FILE defaults to " DEFAULT_CONF "; see dom0-tools/README.md.\n");
}

static void put(struct privd *p, const struct sd_privmsg *m)
{
    if (p->lost)
        return;
    ssize_t n;
    do
        n = send(p->fd, m, sizeof(*m), MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof(*m)) {
        sd_log("sending to shadowd: %s; exiting", n < 0 ? strerror(errno) : "short send");
        p->lost = true;
    }
}

/* ---- the drivers' hooks: notifications to shadowd ---- */

/* A destroy that failed on a domain that is gone now is done, as one asked
 * of a domain already gone is (do_act): someone else's destroy (`xl
 * destroy`, the fault) was still tearing it down when ours began, and ours
 * failed on libxl's lock or on the domain going away mid-way. */
static bool destroyed_anyway(struct kctx *k, unsigned domid, const char *err)
{
    struct sd_domstat st;
    char e[SD_PRIV_ERR];
    if (k->p->ops[k->kind]->info(k->p->drv[k->kind], domid, &st, e, sizeof(e)) < 0 ||
        st.run != SD_RUN_GONE)
        return false;
    sd_log("destroy domain %u: %s, but it is gone: done", domid, err && err[0] ? err : "failed");
    return true;
}

static void hook_done(void *ctx, void *arg, enum sd_drv_op op, int rc, unsigned domid,
                      const char *err)
{
    struct kctx *k = ctx;
    struct pop *o = arg;
    if (op == SD_OP_DESTROY && rc && domid >= 1 && domid <= SD_PRIV_DOMMAX &&
        destroyed_anyway(k, domid, err))
        rc = 0;
    struct sd_privmsg m = {.type = SD_PRIV_DONE, .seq = o->seq, .op = op, .rc = rc ? -1 : 0};
    if (op == SD_OP_CREATE && rc == 0) {
        if (domid < 1 || domid > SD_PRIV_DOMMAX) {
            m.rc = -1;
            snprintf(m.err, sizeof(m.err), "created a domain with domid %u, out of range", domid);
        } else {
            m.domid = domid;
            sd_privown_add(&k->p->own, k->kind, domid);
        }
    }
    if (op == SD_OP_DESTROY && domid >= 1 && domid <= SD_PRIV_DOMMAX) {
        m.domid = domid;
        if (rc == 0)
            sd_privown_del(&k->p->own, k->kind, domid);
    }
    if (m.rc && !m.err[0])
        snprintf(m.err, sizeof(m.err), "%s", err && err[0] ? err : "failed");
    o->used = false;
    put(k->p, &m);
}

static void hook_changed(void *ctx, unsigned domid)
{
    struct kctx *k = ctx;
    if (domid < 1 || domid > SD_PRIV_DOMMAX)
        return;
    struct sd_privmsg m = {.type = SD_PRIV_CHANGED, .kind = k->kind, .domid = domid};
    put(k->p, &m);
}

/* ---- requests ---- */

static void refuse(struct privd *p, struct sd_privmsg *r, int e, const char *what, const char *why)
{
    p->refused++;
    sd_log("refused %s request: %s", what, why);
    r->rc = -1;
    r->err_no = e;
    snprintf(r->err, sizeof(r->err), "refused by shadowd-priv: %s", why);
}

static struct pop *pop_new(struct privd *p, uint32_t seq, enum sd_driver_kind k)
{
    for (int i = 0; i < MAX_OPS; i++) {
        if (!p->pops[i].used) {
            p->pops[i] = (struct pop){.used = true, .seq = seq, .kind = k};
            return &p->pops[i];
        }
    }
    return NULL;
}

/* A driver's answer into the reply: rc, and errno with the message if it failed. */
static void answer(struct sd_privmsg *r, int rc, int e, const char *err)
{
    r->rc = rc < 0 ? -1 : rc;
    if (rc < 0) {
        r->err_no = e ? e : EIO;
        snprintf(r->err, sizeof(r->err), "%s", err[0] ? err : strerror(r->err_no));
    }
}

static void do_find(struct privd *p, const struct sd_privmsg *m, struct sd_privmsg *r)
{
    char why[200], err[SD_PRIV_ERR] = "";
    enum sd_driver_kind k = m->kind;
    if (!sd_privchk_name(p->conf, k, m->name, why, sizeof(why))) {
        refuse(p, r, EPERM, "find", why);
        return;
    }
    unsigned domid = 0;
    errno = 0;
    int rc = p->ops[k]->find(p->drv[k], m->name, &domid, err, sizeof(err));
    answer(r, rc, errno, err);
    if (rc == 0 && domid >= 1 && domid <= SD_PRIV_DOMMAX) {
        r->domid = domid;
        sd_privown_add(&p->own, k, domid);
    } else if (rc == 0) {
        answer(r, -1, EIO, "the driver found a domid out of range");
    }
}

static void do_info(struct privd *p, const struct sd_privmsg *m, struct sd_privmsg *r)
{
    char err[SD_PRIV_ERR] = "";
    struct sd_domstat st;
    enum sd_driver_kind k = m->kind;
    errno = 0;
    int rc = p->ops[k]->info(p->drv[k], m->domid, &st, err, sizeof(err));
    answer(r, rc, errno, err);
    if (rc == 0) {
        r->st.run = st.run;
        r->st.reason = st.reason;
        r->st.shutdown_ms = st.shutdown_ms;
        snprintf(r->st.name, sizeof(r->st.name), "%s", st.name);
    }
}

static void do_look(struct privd *p, const struct sd_privmsg *m, struct sd_privmsg *r)
{
    char err[SD_PRIV_ERR] = "";
    struct sd_domstat st[SD_PRIV_LOOKMAX];
    unsigned domids[SD_PRIV_LOOKMAX];
    enum sd_driver_kind k = m->kind;
    for (unsigned i = 0; i < m->nlook; i++)
        domids[i] = m->look[i].domid;
    errno = 0;
    int rc = sd_drv_look(p->ops[k], p->drv[k], domids, m->nlook, st, err, sizeof(err));
    answer(r, rc, errno, err);
    if (rc == 0) {
        r->nlook = m->nlook;
        for (unsigned i = 0; i < m->nlook; i++) {
            r->look[i].domid = domids[i];
            r->look[i].run = st[i].run;
            r->look[i].reason = st[i].reason;
            r->look[i].shutdown_ms = st[i].shutdown_ms;
        }
    }
}

static void do_create(struct privd *p, const struct sd_privmsg *m, struct sd_privmsg *r)
{
    char why[200], err[SD_PRIV_ERR] = "";
    enum sd_driver_kind k = m->kind;
    const struct sd_domconf *d = sd_privchk_create(p->conf, k, m->dom, m->name, why, sizeof(why));
    if (!d) {
        refuse(p, r, EPERM, "create", why);
        return;
    }
    struct pop *o = pop_new(p, m->seq, k);
    if (!o) {
        refuse(p, r, EBUSY, "create", "too many operations in flight");
        return;
    }
    unsigned domid = 0;
    errno = 0;
    uint64_t t0 = sd_now();
    int rc = p->ops[k]->create(p->drv[k], d, m->name, m->flags & SD_PRIV_F_BOOST, o, &domid, err,
                               sizeof(err));
    uint64_t took = sd_now() - t0;
    answer(r, rc, errno, err);
    if (rc != SD_DRV_PENDING)
        o->used = false;
    if (rc == SD_DRV_DONE) {
        if (domid < 1 || domid > SD_PRIV_DOMMAX) {
            answer(r, -1, EIO, "the driver created a domid out of range");
            return;
        }
        r->domid = domid;
        sd_privown_add(&p->own, k, domid);
    }
    if (rc >= 0)
        sd_log("created %s as '%s'%s (the driver's call took %llu ms)", d->name, m->name,
               rc == SD_DRV_PENDING ? " (pending)" : "", (unsigned long long)took);
}

/* destroy, pause, unpause, crash: only a domain of shadowd.conf's. */
static void do_act(struct privd *p, const struct sd_privmsg *m, struct sd_privmsg *r)
{
    char why[200], err[SD_PRIV_ERR] = "";
    enum sd_driver_kind k = m->kind;
    const char *what = sd_privmsg_type_name(m->type);
    bool destroy = m->type == SD_PRIV_DESTROY;
    struct sd_domstat st;
    errno = 0;
    if (p->ops[k]->info(p->drv[k], m->domid, &st, err, sizeof(err)) < 0) {
        answer(r, -1, errno, err);
        return;
    }
    if (sd_privchk_owned(p->conf, &p->own, k, m->domid, &st, destroy, why, sizeof(why)) < 0) {
        refuse(p, r, EPERM, what, why);
        return;
    }
    if (destroy && st.run == SD_RUN_GONE) {
        r->rc = SD_DRV_DONE; /* nothing left to destroy */
        return;
    }
    int rc;
    errno = 0;
    if (destroy) {
        struct pop *o = pop_new(p, m->seq, k);
        if (!o) {
            refuse(p, r, EBUSY, what, "too many operations in flight");
            return;
        }
        rc = p->ops[k]->destroy(p->drv[k], m->domid, o, err, sizeof(err));
        if (rc != SD_DRV_PENDING)
            o->used = false;
        if (rc == SD_DRV_DONE)
            sd_privown_del(&p->own, k, m->domid);
    } else if (m->type == SD_PRIV_PAUSE) {
        rc = p->ops[k]->pause(p->drv[k], m->domid, err, sizeof(err));
    } else if (m->type == SD_PRIV_UNPAUSE) {
        rc = p->ops[k]->unpause ? p->ops[k]->unpause(p->drv[k], m->domid, err, sizeof(err)) : -1;
        if (!p->ops[k]->unpause)
            snprintf(err, sizeof(err), "the %s driver cannot unpause", p->ops[k]->name);
    } else {
        rc = p->ops[k]->crash(p->drv[k], m->domid, err, sizeof(err));
    }
    answer(r, rc, errno, err);
    if (rc >= 0)
        sd_log("%s domain %u ('%s')", what, m->domid, st.name);
}

/* settle: a configured domain or its standby (after a promotion the one
 * serving may be called NAME.2), and only with a driver that has it. */
static void do_settle(struct privd *p, const struct sd_privmsg *m, struct sd_privmsg *r)
{
    char why[200], err[SD_PRIV_ERR] = "";
    enum sd_driver_kind k = m->kind;
    struct sd_domstat st;
    errno = 0;
    if (p->ops[k]->info(p->drv[k], m->domid, &st, err, sizeof(err)) < 0) {
        answer(r, -1, errno, err);
        return;
    }
    const struct sd_domconf *d = NULL;
    bool ok = false;
    if (st.run == SD_RUN_GONE)
        snprintf(why, sizeof(why), "domain %u does not exist", m->domid);
    else if (!(d = sd_privchk_name(p->conf, k, st.name, why, sizeof(why))))
        ; /* why says it */
    else if (!p->ops[k]->settle)
        snprintf(why, sizeof(why), "the %s driver has no boot weight", sd_driver_name(k));
    else
        ok = true;
    if (!ok) {
        refuse(p, r, EPERM, "settle", why);
        return;
    }
    errno = 0;
    int rc = p->ops[k]->settle(p->drv[k], d, m->domid, err, sizeof(err));
    answer(r, rc, errno, err);
    if (rc >= 0)
        sd_log("settled domain %u ('%s'): its config's weight, boot-weight %u no more", m->domid,
               st.name, d->boot_weight);
}

static void do_watch(struct privd *p, const struct sd_privmsg *m, struct sd_privmsg *r)
{
    enum sd_driver_kind k = m->kind;
    const struct sd_drv_ops *ops = p->ops[k];
    if (m->type == SD_PRIV_UNWATCH) {
        if (ops->unwatch)
            ops->unwatch(p->drv[k], m->domid);
        return;
    }
    if (ops->watch && ops->watch(p->drv[k], m->domid) < 0)
        answer(r, -1, EIO, "the driver cannot watch this domain");
}

#define SLOW_REQUEST_MS 100

static void handle(struct privd *p, const struct sd_privmsg *m, ssize_t len)
{
    uint64_t t0 = sd_now();
    struct sd_privmsg r = {.type = SD_PRIV_REPLY};
    char why[200];
    if (len >= (ssize_t)(offsetof(struct sd_privmsg, seq) + sizeof(m->seq)))
        r.seq = m->seq;
    if (sd_privmsg_check(m, len, false, why, sizeof(why)) < 0) {
        refuse(p, &r, EINVAL, "a malformed", why);
    } else if (!p->drv[m->kind]) {
        snprintf(why, sizeof(why), "driver %s is not used by %s", sd_driver_name(m->kind),
                 p->conf->path);
        refuse(p, &r, EPERM, sd_privmsg_type_name(m->type), why);
    } else {
        switch (m->type) {
        case SD_PRIV_FIND:
            do_find(p, m, &r);
            break;
        case SD_PRIV_INFO:
            do_info(p, m, &r);
            break;
        case SD_PRIV_LOOK:
            do_look(p, m, &r);
            break;
        case SD_PRIV_CREATE:
            do_create(p, m, &r);
            break;
        case SD_PRIV_DESTROY:
        case SD_PRIV_PAUSE:
        case SD_PRIV_CRASH:
        case SD_PRIV_UNPAUSE:
            do_act(p, m, &r);
            break;
        case SD_PRIV_SETTLE:
            do_settle(p, m, &r);
            break;
        default:
            do_watch(p, m, &r);
            break;
        }
    }
    put(p, &r);
    /* Every request is on some recovery's path: a slow one is worth a line
     * (on real Xen a driver call waits behind libxl's locks and xenstored). */
    uint64_t took = sd_now() - t0;
    if (took >= SLOW_REQUEST_MS && m->name[0]) /* by name (bounded: maybe malformed) */
        sd_log("slow request: %s of '%.*s' took %llu ms", sd_privmsg_type_name(m->type),
               (int)sizeof(m->name), m->name, (unsigned long long)took);
    else if (took >= SLOW_REQUEST_MS)
        sd_log("slow request: %s of domain %u took %llu ms", sd_privmsg_type_name(m->type),
               m->domid, (unsigned long long)took);
}

/* Everything shadowd sent, one message at a time. */
static void read_requests(struct privd *p)
{
    for (;;) {
        union {
            struct sd_privmsg m;
            char raw[sizeof(struct sd_privmsg) + 64];
        } u;
        memset(&u, 0, sizeof(u));
        ssize_t n = recv(p->fd, &u, sizeof(u), MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) { /* shadowd closed the socket, or died */
            if (n < 0)
                sd_log("receiving from shadowd: %s; exiting", strerror(errno));
            p->lost = true;
            return;
        }
        handle(p, &u.m, n);
        if (p->lost)
            return;
    }
}

/* ---- start-up ---- */

static int open_drivers(struct privd *p, char *err, size_t len)
{
    for (unsigned i = 0; i < p->conf->ndoms; i++) {
        enum sd_driver_kind k = p->conf->doms[i].driver;
        if (p->drv[k])
            continue;
        p->ops[k] = sd_drv_ops_for(k);
        p->kctx[k] = (struct kctx){.p = p, .kind = k};
        p->hooks[k] =
            (struct sd_drv_hooks){.done = hook_done, .changed = hook_changed, .ctx = &p->kctx[k]};
        char e[200] = "";
        p->drv[k] = p->ops[k]->open(p->conf, &p->hooks[k], e, sizeof(e));
        if (!p->drv[k]) {
            snprintf(err, len, "driver %s: %s", p->ops[k]->name, e);
            return -1;
        }
    }
    return 0;
}

static int serve(struct privd *p)
{
    struct pollfd fds[1 + MAX_DRV_FDS];
    while (!p->lost) {
        int n = 0, timeout = 1000;
        fds[n++] = (struct pollfd){.fd = p->fd, .events = POLLIN};
        int first[SD_DRIVER_KINDS] = {0}, cnt[SD_DRIVER_KINDS] = {0};
        for (int k = 0; k < SD_DRIVER_KINDS; k++) {
            if (!p->drv[k] || !p->ops[k]->prepoll)
                continue;
            int t = timeout;
            first[k] = n;
            cnt[k] =
                p->ops[k]->prepoll(p->drv[k], fds + n, (int)(sizeof(fds) / sizeof(fds[0])) - n, &t);
            n += cnt[k];
            if (t >= 0 && t < timeout)
                timeout = t;
        }
        int r = poll(fds, (nfds_t)n, timeout);
        if (r < 0 && errno != EINTR) {
            sd_log("poll: %s", strerror(errno));
            return 1;
        }
        for (int k = 0; k < SD_DRIVER_KINDS; k++)
            if (p->drv[k] && p->ops[k]->postpoll)
                p->ops[k]->postpoll(p->drv[k], fds + first[k], cnt[k]);
        if (r > 0 && fds[0].revents)
            read_requests(p);
    }
    return 0;
}

/* -n: the config, each domain's driver-specific settings, the user. */
static int check_only(const char *path, bool verbose)
{
    struct sd_conf *c = sd_conf_load(path, stderr);
    if (!c)
        return 1;
    int rc = 0;
    for (unsigned i = 0; i < c->ndoms; i++) {
        const struct sd_drv_ops *ops = sd_drv_ops_for(c->doms[i].driver);
        if (ops && ops->check && ops->check(&c->doms[i], stderr) < 0)
            rc = 1;
    }
    if (c->user && !getpwnam(c->user)) {
        fprintf(stderr, "%s: user '%s': no such user on this system\n", path, c->user);
        rc = 1;
    }
    if (rc == 0) {
        if (verbose)
            sd_conf_dump(c, stdout);
        printf("%s: configuration OK (%u driver domains)\n", path, c->ndoms);
    }
    sd_conf_free(c);
    return rc;
}

/* fd must be a SOCK_SEQPACKET socket: what shadowd hands over, nothing else. */
static int check_fd(int fd)
{
    int type = 0;
    socklen_t l = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_SEQPACKET) {
        fprintf(stderr,
                "shadowd-priv: fd %d is not a SOCK_SEQPACKET socket; shadowd starts "
                "shadowd-priv, not a person\n",
                fd);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    sd_log_start(sd_now());
    sd_log_prog("shadowd-priv");
    static const struct option lo[] = {{"fd", required_argument, NULL, 'f'},
                                       {"t0", required_argument, NULL, 't'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    const char *path = DEFAULT_CONF;
    bool check = false, verbose = false;
    int fd = -1, o;
    while ((o = getopt_long(argc, argv, "c:nvh", lo, NULL)) != -1) {
        switch (o) {
        case 'c':
            path = optarg;
            break;
        case 'n':
            check = true;
            break;
        case 'v':
            verbose = true;
            break;
        case 'f':
            fd = atoi(optarg);
            break;
        case 't':
            sd_log_start(strtoull(optarg, NULL, 10)); /* shadowd's: one timeline in the log */
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc || (check == (fd >= 0))) {
        usage(stderr);
        return 2;
    }
    if (check)
        return check_only(path, verbose);
    if (check_fd(fd) < 0)
        return 2;
    /* Not for what the drivers exec (libxl's hotplug scripts, a device
     * model): shadowd must see the socket close when shadowd-priv ends. */
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        fprintf(stderr, "shadowd-priv: fd %d: %s\n", fd, strerror(errno));
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);

    struct privd p = {.fd = fd};
    struct sd_privmsg hello = {.type = SD_PRIV_HELLO};
    p.conf = sd_conf_load(path, stderr);
    if (!p.conf) {
        hello.rc = -1;
        snprintf(hello.err, sizeof(hello.err), "%s does not load (see above)", path);
    } else if (open_drivers(&p, hello.err, sizeof(hello.err)) < 0) {
        hello.rc = -1;
    }
    put(&p, &hello);
    int rc = hello.rc == 0 ? serve(&p) : 1;
    for (int k = 0; k < SD_DRIVER_KINDS; k++)
        if (p.drv[k])
            p.ops[k]->close(p.drv[k]);
    if (p.refused)
        sd_log("%lu requests refused in this run", p.refused);
    sd_conf_free(p.conf);
    close(fd);
    return rc;
}
