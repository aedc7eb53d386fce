/* hyp_server.c - the hypervisor module's sockets: one listening socket per
 * domain, one connection per library handle, dispatch to hyp_gnt.c and
 * hyp_evtchn.c, and the domain lifecycle of hyp.h.
 */
#define _GNU_SOURCE
#include "hyp.h"
#include "hyp_internal.h"

#include "domain.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xen/xen.h>

struct evloop *hyp_loop;

static struct hyp_dom *doms[XSIM_DOMID_FIRST_RESERVED];

/* One receive buffer for the whole (single-threaded) daemon. */
static union {
    uint64_t align;
    unsigned char b[XSIM_MSG_MAX];
} rxbuf;

/* Messages handled per readiness callback, so one busy client cannot starve the loop. */
#define HYP_MSGS_PER_WAKEUP 64

void hyp_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("xensimd: hyp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void hyp_close_fds(int *fds, unsigned nfds)
{
    for (unsigned i = 0; i < nfds; i++) {
        if (fds[i] >= 0)
            close(fds[i]);
        fds[i] = -1;
    }
}

struct hyp_dom *hyp_dom_find(unsigned domid)
{
    if (domid >= XSIM_DOMID_FIRST_RESERVED)
        return NULL;
    return doms[domid];
}

bool hyp_dom_live(const struct hyp_dom *d)
{
    return !d->dying && dom_is_alive(d->domid);
}

void hyp_reply(struct hyp_conn *c, const struct xsim_hdr *h, int err, const void *body, size_t len,
               const int *fds, unsigned nfds)
{
    if (c->dead)
        return;
    struct xsim_hdr r = {.op = h->op, .seq = h->seq, .err = err, .len = err ? 0 : (uint32_t)len};
    if (xsim_send(c->fd, &r, err ? NULL : body, err ? NULL : fds, err ? 0 : nfds) < 0) {
        /* A well-behaved library reads every reply before its next request,
         * so a full socket means a misbehaving client: drop it. */
        c->dead = true;
    }
}

static void conn_close(struct hyp_conn *c, bool notify)
{
    struct hyp_dom *d = c->dom;
    switch (c->kind) {
    case HYP_KIND_GNTTAB:
    case HYP_KIND_GNTSHR:
        hyp_gnt_conn_close(c, notify);
        break;
    case HYP_KIND_EVTCHN:
        hyp_evt_conn_close(c);
        break;
    default:
        break;
    }
    evloop_fd_delete(hyp_loop, c->fd);
    close(c->fd);
    if (c->prev)
        c->prev->next = c->next;
    else
        d->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    d->nconns--;
    free(c);
}

/* The peer closed: its handle is gone, or its process died. A dead domain's
 * kernel performs no unmap-notify, and a domain's main process dying is the
 * domain dying (xensim shuts it down), so neither notifies; a main process
 * closing its handle (HYP_BYE first) does. */
static void conn_lost(struct hyp_conn *c)
{
    conn_close(c, (c->bye || !c->leader) && hyp_dom_live(c->dom));
}

static void do_hello(struct hyp_conn *c, const struct xsim_hdr *h, const void *body, int *fds,
                     unsigned nfds)
{
    struct hyp_hello req;
    if (c->kind || h->len != sizeof(req)) {
        hyp_close_fds(fds, nfds);
        c->dead = true;
        return;
    }
    memcpy(&req, body, sizeof(req));
    int err = 0, genfd = -1;
    if (req.version != HYP_PROTO_VERSION) {
        err = EPROTO;
    } else if (req.kind == HYP_KIND_EVTCHN) {
        if (nfds != 1) {
            err = EINVAL;
        } else {
            err = hyp_evt_conn_open(c, fds[0], &genfd) < 0 ? errno : 0;
            if (!err)
                fds[0] = -1; /* taken */
        }
    } else if (req.kind == HYP_KIND_GNTTAB || req.kind == HYP_KIND_GNTSHR) {
        if (nfds)
            err = EINVAL;
    } else {
        err = EINVAL;
    }
    hyp_close_fds(fds, nfds);
    if (!err) {
        c->kind = req.kind;
        c->max_grants = HYP_MAX_GRANTS_LIMIT;
    }
    struct hyp_hello_reply rep = {.domid = c->dom->domid};
    hyp_reply(c, h, err, &rep, sizeof(rep), &genfd, genfd >= 0 ? 1 : 0);
    if (genfd >= 0)
        close(genfd); /* the daemon keeps its own mapping */
    if (err)
        c->dead = true;
}

static void dispatch(struct hyp_conn *c, const struct xsim_hdr *h, const void *body, int *fds,
                     unsigned nfds)
{
    if (h->op == HYP_HELLO) {
        do_hello(c, h, body, fds, nfds);
        return;
    }
    if (h->op == HYP_BYE && c->kind && !nfds && h->len == 0) {
        c->bye = true;
        return;
    }
    switch (c->kind) {
    case HYP_KIND_GNTTAB:
    case HYP_KIND_GNTSHR:
        hyp_gnt_dispatch(c, h, body, fds, nfds);
        break;
    case HYP_KIND_EVTCHN:
        hyp_evt_dispatch(c, h, body, fds, nfds);
        break;
    default:
        hyp_close_fds(fds, nfds);
        c->dead = true;
        break;
    }
}

static void conn_cb(void *opaque, int fd, uint32_t events)
{
    struct hyp_conn *c = opaque;
    for (int i = 0; i < HYP_MSGS_PER_WAKEUP; i++) {
        struct xsim_hdr h;
        int fds[4];
        unsigned nfds = 4;
        int r = xsim_recv(fd, &h, rxbuf.b, sizeof(rxbuf.b), fds, &nfds);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (events & (EPOLLHUP | EPOLLERR) && !(events & EPOLLIN))
                conn_lost(c);
            return;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r < 0 && errno == EPROTO)
                hyp_log("dom%u: malformed message, closing the connection", c->dom->domid);
            conn_lost(c);
            return;
        }
        dispatch(c, &h, rxbuf.b, fds, nfds);
        if (c->dead) {
            conn_lost(c);
            return;
        }
    }
}

static void accept_cb(void *opaque, int lfd, uint32_t events)
{
    struct hyp_dom *d = opaque;
    (void)events;
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                hyp_log("dom%u: accept: %s", d->domid, strerror(errno));
            return;
        }
        if (d->domid != 0 && d->nconns >= HYP_CONNS_PER_DOMAIN) {
            static unsigned refused;
            if (refused++ % 100 == 0)
                hyp_log("dom%u holds %u handles, the most a domain may: refusing another (%u "
                        "refused so far)",
                        d->domid, d->nconns, refused);
            close(fd);
            continue;
        }
        struct hyp_conn *c = calloc(1, sizeof(*c));
        if (!c) {
            close(fd);
            continue;
        }
        c->dom = d;
        c->fd = fd;
        c->evfd = -1;
        c->restrict_dom = HYP_NONE;
        c->next_map_id = 1;
        /* A domain's main process is the session leader xensim made it
         * (domain.c: setsid before exec). */
        struct ucred cr;
        socklen_t crl = sizeof(cr);
        if (d->domid != 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) == 0 &&
            cr.pid > 0 && getsid(cr.pid) == cr.pid)
            c->leader = true;
        if (evloop_fd_create(hyp_loop, fd, EPOLLIN, conn_cb, c) < 0) {
            close(fd);
            free(c);
            continue;
        }
        c->next = d->conns;
        if (d->conns)
            d->conns->prev = c;
        d->conns = c;
        d->nconns++;
    }
}

static unsigned env_unsigned(const char *name, unsigned dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > HYP_NR_GRANTS) {
        hyp_log("ignoring %s=%s (want 0..%u)", name, s, HYP_NR_GRANTS);
        return dflt;
    }
    return (unsigned)v;
}

int hyp_server_init(struct evloop *l)
{
    hyp_loop = l;
    /* Every shared object holds an fd or two here; allow as many as the host does. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    /* gntalloc's "limit" module parameter: grants a domain's processes may
     * share at once (default 1024, as in Linux). */
    hyp_gnt_set_limit(env_unsigned("XENSIM_GNTALLOC_LIMIT", 1024));
    return 0;
}

static void dom_free(struct hyp_dom *d)
{
    while (d->conns) {
        /* gnttab/gntshr first: their notify references hold event ports. */
        struct hyp_conn *c = d->conns;
        for (struct hyp_conn *x = d->conns; x; x = x->next) {
            if (x->kind != HYP_KIND_EVTCHN) {
                c = x;
                break;
            }
        }
        conn_close(c, false);
    }
    if (d->lfd >= 0) {
        evloop_fd_delete(hyp_loop, d->lfd);
        close(d->lfd);
    }
    hyp_gnt_dom_fini(d);
    hyp_evt_dom_fini(d);
    doms[d->domid] = NULL;
    free(d);
}

void hyp_server_fini(void)
{
    for (unsigned i = 0; i < XSIM_DOMID_FIRST_RESERVED; i++) {
        if (doms[i]) {
            doms[i]->dying = true;
            dom_free(doms[i]);
        }
    }
    hyp_loop = NULL;
}

int hyp_server_listen(unsigned domid, const char *path)
{
    if (!hyp_loop || domid >= XSIM_DOMID_FIRST_RESERVED) {
        errno = EINVAL;
        return -1;
    }
    if (doms[domid]) {
        errno = EEXIST;
        return -1;
    }
    struct hyp_dom *d = calloc(1, sizeof(*d));
    if (!d)
        return -1;
    d->domid = domid;
    d->lfd = -1;
    d->gtab_fd = -1;
    d->gtab_ro_fd = -1;
    if (hyp_gnt_dom_init(d) < 0) {
        int e = errno;
        free(d);
        errno = e;
        return -1;
    }
    d->lfd = xsim_listen(path);
    if (d->lfd < 0 || evloop_fd_create(hyp_loop, d->lfd, EPOLLIN, accept_cb, d) < 0) {
        int e = errno;
        if (d->lfd >= 0)
            close(d->lfd);
        d->lfd = -1;
        hyp_gnt_dom_fini(d);
        free(d);
        errno = e;
        return -1;
    }
    doms[domid] = d;
    return 0;
}

void hyp_domain_dying(unsigned domid)
{
    struct hyp_dom *d = hyp_dom_find(domid);
    if (d)
        d->dying = true;
    hyp_evt_raise_virq(VIRQ_DOM_EXC);
}

void hyp_domain_destroyed(unsigned domid)
{
    struct hyp_dom *d = hyp_dom_find(domid);
    if (d) {
        d->dying = true;
        dom_free(d);
    }
    hyp_evt_raise_virq(VIRQ_DOM_EXC);
}
