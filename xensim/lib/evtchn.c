/* evtchn.c - drop-in libxenevtchn.so.1 for xensim, with Debian's symbols and
 * version nodes (libxenevtchn.map) and the semantics of Linux's evtchn
 * device. See ../proto/hyp_proto.h: each bound port has a doorbell (a unix
 * datagram socketpair; we read one end, the daemon and the peer's handle send
 * on the other), so an event between two domains is one send() and no
 * daemon round trip. xenevtchn_fd() is an epoll set of the handle's
 * doorbells (one-shot: a port delivered is masked until unmasked, as the
 * driver masks it), of an eventfd for ports raised again by unmask (events
 * that came while masked: pending, delivered once), and of the event socket,
 * whose close says the daemon or the domain is gone.
 *
 * xenevtchn_fdopen() cannot rebuild a handle from an fd here (the handle is
 * two sockets and a port table), so it fails with EOPNOTSUPP.
 */
#define _GNU_SOURCE
#include "client.h"

#include "hyp_proto.h"
#include "msg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xenevtchn.h>

#define MARK_HUP   0xFFFFFFFFu /* epoll data: the event socket */
#define MARK_LOCAL 0xFFFFFFFEu /* epoll data: the eventfd of ports raised by unmask */
/* Datagrams drained from a doorbell at unmask, at most (a peer may ring a
 * masked port often; they are one pending event however many). */
#define DRAIN_MAX 64

/* A port as this handle sees it. fds are stored + 1 so that 0 is "none". */
struct port {
    int rx1;        /* the doorbell's reading end, if the handle bound the port */
    int tx1;        /* the peer's doorbell, cached */
    uint32_t txgen; /* the generation count tx1 was taken at */
    bool cached;    /* tx1/txgen are valid for some generation */
    bool masked;    /* delivered and not yet unmasked */
    bool local;     /* raised again by unmask, waiting for pending() */
};

struct xenevtchn_handle {
    struct xsim_client c;
    int evsock;          /* our end of the event socket */
    int epfd;            /* xenevtchn_fd() */
    int localfd;         /* eventfd, readable while nlocal > 0 */
    const uint32_t *gen; /* the daemon's generation page, read-only */
    bool cloexec;
    pthread_mutex_t lock; /* the port table */
    unsigned nlocal;
    uint32_t local_hint; /* where to look for a raised port first */
    struct port ports[HYP_NR_PORTS];
};

#define GEN_BYTES (HYP_NR_PORTS * sizeof(uint32_t))

static int arm(xenevtchn_handle *xce, int op, int fd, uint32_t data, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.u32 = data};
    return epoll_ctl(xce->epfd, op, fd, &ev);
}

/* A doorbell pair; a process with many ports may need more fds than the
 * usual soft limit of 1024 (the evtchn device needs none per port), so the
 * first EMFILE raises the soft limit to the hard one. */
static int bell_pair(bool cloexec, int sv[2])
{
    int type = SOCK_DGRAM | SOCK_NONBLOCK | (cloexec ? SOCK_CLOEXEC : 0);
    if (socketpair(AF_UNIX, type, 0, sv) == 0)
        return 0;
    struct rlimit rl;
    if (errno != EMFILE || getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max) {
        errno = EMFILE;
        return -1;
    }
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
        errno = EMFILE;
        return -1;
    }
    return socketpair(AF_UNIX, type, 0, sv);
}

/* No port raised by unmask is left: the eventfd must not stay readable, or
 * a caller that polled would find nothing to take. */
static void local_clear(xenevtchn_handle *xce)
{
    uint64_t v; /* nonblocking: never waits */
    ssize_t r = read(xce->localfd, &v, sizeof(v));
    (void)r;
}

/* One more port raised locally: the eventfd readable from the first. */
static void raise_local(xenevtchn_handle *xce)
{
    if (xce->nlocal++ == 0) {
        uint64_t one = 1; /* the count is 0 here: cannot fail */
        ssize_t r = write(xce->localfd, &one, sizeof(one));
        (void)r;
    }
}

/* Forget the port: stop watching it (unless the whole handle is closing:
 * after a fork the epoll set may be shared with the parent, whose ports must
 * stay in it) and close its fds. An event that was delivered and not yet
 * taken (queued while unmasked, or raised by unmask) stays readable once, as
 * a port in the evtchn driver's ring is still read after its unbind: a
 * caller that saw the fd readable, then unbound the port, must not block in
 * xenevtchn_pending. Called with the lock. */
static void port_reset(xenevtchn_handle *xce, struct port *p, bool closing)
{
    bool stale = false, was_local = p->local;
    if (p->rx1) {
        if (!closing) {
            epoll_ctl(xce->epfd, EPOLL_CTL_DEL, p->rx1 - 1, NULL);
            char b[16];
            stale = was_local || (!p->masked && recv(p->rx1 - 1, b, sizeof(b), MSG_DONTWAIT) >= 0);
        }
        close(p->rx1 - 1);
    }
    if (p->tx1)
        close(p->tx1 - 1);
    memset(p, 0, sizeof(*p));
    if (stale) {
        p->local = true; /* taken by take_local: a port no longer bound */
        if (!was_local)
            raise_local(xce);
    } else if (was_local && --xce->nlocal == 0) {
        local_clear(xce);
    }
}

XSIM_EXPORT xenevtchn_handle *xenevtchn_open(struct xentoollog_logger *logger, unsigned int flags)
{
    if (flags & ~XENEVTCHN_NO_CLOEXEC) {
        errno = EINVAL;
        return NULL;
    }
    bool cloexec = !(flags & XENEVTCHN_NO_CLOEXEC);
    xenevtchn_handle *xce = calloc(1, sizeof(*xce));
    if (!xce)
        return NULL;
    xce->cloexec = cloexec;
    xce->evsock = xce->epfd = xce->localfd = -1;
    xce->gen = MAP_FAILED;
    int sv[2], genfd = -1, e;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | (cloexec ? SOCK_CLOEXEC : 0), 0, sv) < 0) {
        e = errno;
        xsim_client_log(logger, "evtchn", e, "could not create the event socket");
        free(xce);
        errno = e;
        return NULL;
    }
    int rc = xsim_client_open(&xce->c, HYP_KIND_EVTCHN, cloexec, sv[1], &genfd, logger, "evtchn");
    e = errno;
    close(sv[1]); /* the daemon has its copy */
    if (rc < 0) {
        close(sv[0]);
        free(xce);
        errno = e;
        return NULL;
    }
    xce->evsock = sv[0];
    xce->gen = mmap(NULL, GEN_BYTES, PROT_READ, MAP_SHARED, genfd, 0);
    e = errno;
    close(genfd);
    if (xce->gen == MAP_FAILED)
        goto fail;
    xce->epfd = epoll_create1(cloexec ? EPOLL_CLOEXEC : 0);
    xce->localfd = eventfd(0, EFD_NONBLOCK | (cloexec ? EFD_CLOEXEC : 0));
    if (xce->epfd < 0 || xce->localfd < 0 ||
        arm(xce, EPOLL_CTL_ADD, xce->evsock, MARK_HUP, EPOLLRDHUP) < 0 ||
        arm(xce, EPOLL_CTL_ADD, xce->localfd, MARK_LOCAL, EPOLLIN) < 0)
        goto fail_errno;
    if (pthread_mutex_init(&xce->lock, NULL)) {
        e = ENOMEM;
        goto fail;
    }
    return xce;
fail_errno:
    e = errno;
fail:
    xsim_client_log(logger, "evtchn", e, "could not set up the handle");
    if (xce->gen != MAP_FAILED)
        munmap((void *)xce->gen, GEN_BYTES);
    if (xce->epfd >= 0)
        close(xce->epfd);
    if (xce->localfd >= 0)
        close(xce->localfd);
    close(xce->evsock);
    xsim_client_close(&xce->c);
    free(xce);
    errno = e;
    return NULL;
}

XSIM_EXPORT xenevtchn_handle *xenevtchn_fdopen(struct xentoollog_logger *logger, int fd,
                                               unsigned open_flags)
{
    (void)logger, (void)fd, (void)open_flags;
    errno = EOPNOTSUPP;
    return NULL;
}

XSIM_EXPORT int xenevtchn_close(xenevtchn_handle *xce)
{
    if (!xce)
        return 0;
    xsim_client_close(&xce->c);
    for (uint32_t i = 1; i < HYP_NR_PORTS; i++)
        port_reset(xce, &xce->ports[i], true);
    munmap((void *)xce->gen, GEN_BYTES);
    close(xce->epfd);
    close(xce->localfd);
    close(xce->evsock);
    pthread_mutex_destroy(&xce->lock);
    free(xce);
    return 0;
}

XSIM_EXPORT int xenevtchn_fd(xenevtchn_handle *xce)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    return xce->epfd;
}

/* Check a bind's or HYP_EVT_PEER's reply: its length, its port (want, or
 * any valid one if want is 0), and that the peer's doorbell came (as fd, one
 * of nfd) exactly when it says so. On error the fd is closed and errno is
 * EPROTO. */
static int port_reply(const struct hyp_port_reply *rep, size_t rlen, int fd, unsigned nfd,
                      uint32_t want)
{
    if (rlen == sizeof(*rep) && rep->port != 0 && rep->port < HYP_NR_PORTS &&
        (!want || rep->port == want) && nfd == (rep->bell ? 1u : 0u))
        return 0;
    if (nfd)
        close(fd);
    errno = EPROTO;
    return -1;
}

/* Cache the peer's doorbell a checked reply brought (fd, if rep->bell). */
static void set_peer(struct port *p, const struct hyp_port_reply *rep, int fd)
{
    p->tx1 = rep->bell ? fd + 1 : 0;
    p->txgen = rep->gen;
    p->cached = true;
}

/* The peer's doorbell for port (ours, bound), current for the port's
 * generation count: asked of the daemon only when the peer changed. Called
 * with the lock. */
static int peer_bell(xenevtchn_handle *xce, uint32_t port)
{
    struct port *p = &xce->ports[port];
    uint32_t g = __atomic_load_n(&xce->gen[port], __ATOMIC_ACQUIRE);
    if (p->cached && p->txgen == g)
        return p->tx1 - 1;
    if (p->tx1)
        close(p->tx1 - 1);
    p->tx1 = 0;
    p->cached = false;
    struct hyp_u32 req = {port};
    struct hyp_port_reply rep;
    size_t rlen;
    int fd = -1;
    unsigned nfd = 1;
    if (xsim_client_call(&xce->c, HYP_EVT_PEER, &req, sizeof(req), NULL, 0, &rep, sizeof(rep),
                         &rlen, &fd, &nfd) < 0 ||
        port_reply(&rep, rlen, fd, nfd, port) < 0)
        return -2;
    set_peer(p, &rep, fd);
    return p->tx1 - 1;
}

XSIM_EXPORT int xenevtchn_notify(xenevtchn_handle *xce, evtchn_port_t port)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    if (port >= HYP_NR_PORTS) {
        errno = ENOTCONN;
        return -1;
    }
    pthread_mutex_lock(&xce->lock);
    int rc = 0;
    if (!xce->ports[port].rx1) {
        errno = ENOTCONN; /* evtchn: not bound by this handle */
        rc = -1;
    } else {
        int fd = peer_bell(xce, port);
        if (fd >= 0)
            xsim_ring_bell(fd);
        else if (fd == -2)
            rc = -1;
        /* -1: no peer (an unbound port): Xen drops the event */
    }
    int e = errno;
    pthread_mutex_unlock(&xce->lock);
    errno = e;
    return rc;
}

static xenevtchn_port_or_error_t bind_port(xenevtchn_handle *xce, uint32_t op, const void *req,
                                           size_t len)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    int sv[2];
    if (bell_pair(xce->cloexec, sv) < 0)
        return -1;
    struct hyp_port_reply rep;
    size_t rlen;
    int peer = -1;
    unsigned npeer = 1;
    int rc =
        xsim_client_call(&xce->c, op, req, len, &sv[1], 1, &rep, sizeof(rep), &rlen, &peer, &npeer);
    if (rc == 0)
        rc = port_reply(&rep, rlen, peer, npeer, 0);
    int e = errno;
    close(sv[1]); /* the daemon has its copy */
    if (rc < 0) {
        close(sv[0]);
        errno = e;
        return -1;
    }
    pthread_mutex_lock(&xce->lock);
    struct port *p = &xce->ports[rep.port];
    port_reset(xce, p, false);
    p->rx1 = sv[0] + 1;
    set_peer(p, &rep, peer);
    rc = arm(xce, EPOLL_CTL_ADD, sv[0], rep.port, EPOLLIN | EPOLLONESHOT);
    e = errno;
    pthread_mutex_unlock(&xce->lock);
    if (rc < 0) {
        errno = e;
        return -1;
    }
    return (xenevtchn_port_or_error_t)rep.port;
}

XSIM_EXPORT xenevtchn_port_or_error_t xenevtchn_bind_unbound_port(xenevtchn_handle *xce,
                                                                  uint32_t domid)
{
    struct hyp_u32 req = {domid};
    return bind_port(xce, HYP_EVT_BIND_UNBOUND, &req, sizeof(req));
}

XSIM_EXPORT xenevtchn_port_or_error_t xenevtchn_bind_interdomain(xenevtchn_handle *xce,
                                                                 uint32_t domid,
                                                                 evtchn_port_t remote_port)
{
    struct hyp_bind_req req = {.remote_dom = domid, .remote_port = remote_port};
    return bind_port(xce, HYP_EVT_BIND_INTERDOMAIN, &req, sizeof(req));
}

XSIM_EXPORT xenevtchn_port_or_error_t xenevtchn_bind_virq(xenevtchn_handle *xce, unsigned int virq)
{
    struct hyp_u32 req = {virq};
    return bind_port(xce, HYP_EVT_BIND_VIRQ, &req, sizeof(req));
}

static bool owned(xenevtchn_handle *xce, evtchn_port_t port)
{
    pthread_mutex_lock(&xce->lock);
    bool r = xce->ports[port].rx1 != 0;
    pthread_mutex_unlock(&xce->lock);
    return r;
}

XSIM_EXPORT int xenevtchn_unbind(xenevtchn_handle *xce, evtchn_port_t port)
{
    if (!xce || port >= HYP_NR_PORTS) {
        errno = EINVAL;
        return -1;
    }
    if (!owned(xce, port)) {
        errno = ENOTCONN;
        return -1;
    }
    struct hyp_u32 req = {port};
    if (xsim_client_call(&xce->c, HYP_EVT_UNBIND, &req, sizeof(req), NULL, 0, NULL, 0, NULL, NULL,
                         NULL) < 0)
        return -1;
    pthread_mutex_lock(&xce->lock);
    port_reset(xce, &xce->ports[port], false);
    pthread_mutex_unlock(&xce->lock);
    return 0;
}

/* A port raised again by unmask, or 0. Called with the lock. */
static uint32_t take_local(xenevtchn_handle *xce)
{
    uint32_t found = 0;
    for (uint32_t k = 0; k < HYP_NR_PORTS && xce->nlocal; k++) {
        uint32_t i = (xce->local_hint + k) % HYP_NR_PORTS;
        if (xce->ports[i].local) {
            xce->ports[i].local = false;
            xce->nlocal--;
            xce->local_hint = i + 1;
            found = i;
            break;
        }
    }
    if (!xce->nlocal)
        local_clear(xce);
    return found;
}

XSIM_EXPORT xenevtchn_port_or_error_t xenevtchn_pending(xenevtchn_handle *xce)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    /* Each turn either returns or consumes what epoll reported (a stale or
     * spurious readiness), so the loop ends. */
    for (;;) {
        struct epoll_event ev;
        int n = epoll_wait(xce->epfd, &ev, 1, 0);
        if (n == 0) {
            int fl = fcntl(xce->epfd, F_GETFL);
            if (fl >= 0 && (fl & O_NONBLOCK)) {
                errno = EAGAIN; /* the caller made the fd non-blocking */
                return -1;
            }
            n = epoll_wait(xce->epfd, &ev, 1, -1);
        }
        if (n < 0)
            return -1; /* EINTR, as a read() of the device would */
        if (n == 0)
            continue;
        if (ev.data.u32 == MARK_HUP) {
            errno = ECONNRESET; /* the daemon is gone, or the domain */
            return -1;
        }
        pthread_mutex_lock(&xce->lock);
        uint32_t port = 0;
        if (ev.data.u32 == MARK_LOCAL) {
            port = take_local(xce);
        } else if (ev.data.u32 < HYP_NR_PORTS && xce->ports[ev.data.u32].rx1) {
            struct port *p = &xce->ports[ev.data.u32];
            char b;
            if (recv(p->rx1 - 1, &b, 1, MSG_DONTWAIT) == 1)
                port = ev.data.u32;
            else /* nothing there after all: watch it again */
                arm(xce, EPOLL_CTL_MOD, p->rx1 - 1, ev.data.u32, EPOLLIN | EPOLLONESHOT);
        }
        if (port)
            xce->ports[port].masked = true;
        pthread_mutex_unlock(&xce->lock);
        if (port)
            return (xenevtchn_port_or_error_t)port;
    }
}

XSIM_EXPORT int xenevtchn_unmask(xenevtchn_handle *xce, evtchn_port_t port)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    /* evtchn's write() ignores ports the handle has not bound. */
    if (port >= HYP_NR_PORTS)
        return 0;
    pthread_mutex_lock(&xce->lock);
    struct port *p = &xce->ports[port];
    if (p->rx1 && p->masked && !p->local) {
        /* What came while it was masked is one pending event, delivered
         * now (and masking the port again); else it is watched again. */
        int n = 0;
        char b[16];
        while (n < DRAIN_MAX && recv(p->rx1 - 1, b, sizeof(b), MSG_DONTWAIT) >= 0)
            n++;
        if (n) {
            p->local = true;
            raise_local(xce);
        } else {
            p->masked = false;
            arm(xce, EPOLL_CTL_MOD, p->rx1 - 1, port, EPOLLIN | EPOLLONESHOT);
        }
    }
    pthread_mutex_unlock(&xce->lock);
    return 0;
}
XSIM_EXPORT int xenevtchn_restrict(xenevtchn_handle *xce, domid_t domid)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    struct hyp_u32 req = {domid};
    return xsim_client_call(&xce->c, HYP_EVT_RESTRICT, &req, sizeof(req), NULL, 0, NULL, 0, NULL,
                            NULL, NULL);
}
