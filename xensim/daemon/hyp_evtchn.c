/* hyp_evtchn.c - event channels: Xen's common/event_channel.c semantics for
 * the ports of each domain, and who may ring whom.
 *
 * Ports are allocated lowest-free from 1 (port 0 is reserved), as Xen's
 * get_free_port does. An event is a datagram on the port's doorbell
 * (hyp_proto.h): the daemon rings it for the events it makes itself, and
 * hands it to the peer's handle so that notifies skip the daemon. Pending
 * and masking live in the library, per handle, as they do in Linux's evtchn
 * driver. Each handle's generation page tells its library when a port's
 * peer changed, so that it drops the bell it cached.
 */
#define _GNU_SOURCE
#include "hyp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xen/xen.h>

static uint32_t port_no(const struct hyp_dom *d, const struct hyp_port *p)
{
    return (uint32_t)(p - d->ports);
}

/* An allocatable port number's state, or NULL (port 0 is Xen's reserved one). */
static struct hyp_port *port_get(struct hyp_dom *d, uint32_t port)
{
    if (!d || !d->ports || port == 0 || port >= HYP_NR_PORTS)
        return NULL;
    return &d->ports[port];
}

static int get_free_port(struct hyp_dom *d, uint32_t *out)
{
    if (d->dying)
        return EINVAL; /* Xen: get_free_port on a dying domain */
    if (!d->ports) {
        d->ports = calloc(HYP_NR_PORTS, sizeof(*d->ports));
        if (!d->ports)
            return ENOMEM;
    }
    for (uint32_t p = 1; p < HYP_NR_PORTS; p++) {
        if (d->ports[p].state == HYP_PORT_FREE) {
            *out = p;
            return 0;
        }
    }
    return ENOSPC;
}

/* --- delivery --------------------------------------------------------------- */

/* An event for port p: a ring of its doorbell, if a handle holds the port. */
static void ring(struct hyp_port *p)
{
    if (p->h && p->bell1)
        xsim_ring_bell(p->bell1 - 1);
}

/* The port's peer changed (bound, closed): its handle's library drops the
 * peer's bell it cached and asks again (HYP_EVT_PEER). */
static void bump(struct hyp_port *p, uint32_t pn)
{
    if (p->h && p->h->gen)
        __atomic_add_fetch(&p->h->gen[pn], 1, __ATOMIC_RELEASE);
}

static void drop_bell(struct hyp_port *p)
{
    if (p->bell1)
        close(p->bell1 - 1);
    p->bell1 = 0;
}

/* EVTCHNOP_send from local port p of d. */
static void send_from(struct hyp_dom *d, struct hyp_port *p)
{
    (void)d;
    if (p->state != HYP_PORT_INTERDOMAIN)
        return; /* unbound: "silently drop the notification" */
    struct hyp_dom *rd = hyp_dom_find(p->remote_dom);
    struct hyp_port *rp = port_get(rd, p->remote_port);
    if (rp && rp->state == HYP_PORT_INTERDOMAIN)
        ring(rp);
}

/* EVTCHNOP_close: an interdomain peer becomes unbound (and may bind again). */
static void close_port(struct hyp_dom *d, struct hyp_port *p)
{
    drop_bell(p);
    if (p->state == HYP_PORT_INTERDOMAIN) {
        struct hyp_dom *rd = hyp_dom_find(p->remote_dom);
        struct hyp_port *rp = port_get(rd, p->remote_port);
        if (rp && rp->state == HYP_PORT_INTERDOMAIN && rp->remote_dom == d->domid &&
            rp->remote_port == port_no(d, p)) {
            rp->state = HYP_PORT_UNBOUND;
            rp->remote_port = 0;
            bump(rp, p->remote_port);
        }
    } else if (p->state == HYP_PORT_VIRQ && p->virq < 32) {
        d->virq_port[p->virq] = 0;
    }
    memset(p, 0, sizeof(*p));
}

/* The handle lets go of the port; it closes unless an unmap notification holds it. */
static void unbind(struct hyp_dom *d, struct hyp_port *p)
{
    p->h = NULL;
    drop_bell(p);
    if (!p->notify_refs)
        close_port(d, p);
}

/* Port pn of c's domain is now c's, with doorbell fd bell (taken). */
static void bind_to(struct hyp_conn *c, struct hyp_port *p, uint32_t pn, int bell)
{
    p->h = c;
    p->bell1 = bell + 1;
    bump(p, pn);
}

int hyp_evt_notify_get(struct hyp_dom *d, uint32_t port)
{
    struct hyp_port *p = port_get(d, port);
    if (!p || p->state == HYP_PORT_FREE || (!p->h && !p->notify_refs)) {
        errno = EINVAL;
        return -1;
    }
    p->notify_refs++;
    return 0;
}

void hyp_evt_notify_put(struct hyp_dom *d, uint32_t port, bool send)
{
    struct hyp_port *p = port_get(d, port);
    if (!p || p->state == HYP_PORT_FREE || !p->notify_refs)
        return;
    if (send)
        send_from(d, p);
    if (!--p->notify_refs && !p->h)
        close_port(d, p);
}

void hyp_evt_raise_virq(unsigned virq)
{
    struct hyp_dom *d0 = hyp_dom_find(0);
    if (!d0 || !d0->ports || virq >= 32 || !d0->virq_port[virq])
        return;
    ring(&d0->ports[d0->virq_port[virq]]);
}

/* --- handles ------------------------------------------------------------------ */

int hyp_evt_conn_open(struct hyp_conn *c, int evfd, int *genfd)
{
    int type;
    socklen_t tl = sizeof(type);
    if (getsockopt(evfd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET) {
        errno = EINVAL;
        return -1;
    }
    size_t len = HYP_NR_PORTS * sizeof(uint32_t);
    int fd = memfd_create("xensim-evtchn-gen", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    void *m = MAP_FAILED;
    if (ftruncate(fd, (off_t)len) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ||
        (m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    /* The library gets a read-only reopening: it cannot change the counts. */
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    int e = errno;
    close(fd);
    if (ro < 0) {
        munmap(m, len);
        errno = e;
        return -1;
    }
    c->evfd = evfd;
    c->gen = m;
    *genfd = ro;
    return 0;
}

void hyp_evt_conn_close(struct hyp_conn *c)
{
    struct hyp_dom *d = c->dom;
    if (d->ports) {
        for (uint32_t i = 1; i < HYP_NR_PORTS; i++) {
            if (d->ports[i].h == c)
                unbind(d, &d->ports[i]);
        }
    }
    if (c->gen)
        munmap(c->gen, HYP_NR_PORTS * sizeof(uint32_t));
    c->gen = NULL;
    if (c->evfd >= 0)
        close(c->evfd);
    c->evfd = -1;
}

void hyp_evt_dom_fini(struct hyp_dom *d)
{
    if (!d->ports)
        return;
    for (uint32_t i = 1; i < HYP_NR_PORTS; i++) {
        if (d->ports[i].state != HYP_PORT_FREE)
            close_port(d, &d->ports[i]);
    }
    free(d->ports);
    d->ports = NULL;
}

/* A bind's or HYP_EVT_PEER's reply: the port, its generation count, and the
 * doorbell of the port's peer, if it has one with a handle. */
static void reply_port(struct hyp_conn *c, const struct xsim_hdr *h, int err, uint32_t port)
{
    struct hyp_port_reply r = {.port = port};
    int bell = -1;
    if (!err) {
        r.gen = __atomic_load_n(&c->gen[port], __ATOMIC_ACQUIRE);
        struct hyp_port *p = &c->dom->ports[port];
        if (p->state == HYP_PORT_INTERDOMAIN) {
            struct hyp_port *rp = port_get(hyp_dom_find(p->remote_dom), p->remote_port);
            if (rp && rp->state == HYP_PORT_INTERDOMAIN && rp->h && rp->bell1)
                bell = rp->bell1 - 1;
        }
    }
    r.bell = bell >= 0;
    hyp_reply(c, h, err, &r, sizeof(r), &bell, bell >= 0 ? 1 : 0);
}

static uint16_t self_domid(struct hyp_conn *c, uint32_t v)
{
    uint16_t dom = (uint16_t)v; /* the hypercall's domid_t */
    return dom == DOMID_SELF ? (uint16_t)c->dom->domid : dom;
}

/* The binds return whether they took the doorbell (they did if they bound). */
static bool do_bind_unbound(struct hyp_conn *c, const struct xsim_hdr *h, uint32_t remote, int bell)
{
    if (c->restrict_dom != HYP_NONE) {
        reply_port(c, h, EACCES, 0);
        return false;
    }
    uint32_t pn;
    int err = get_free_port(c->dom, &pn);
    if (err) {
        reply_port(c, h, err, 0);
        return false;
    }
    struct hyp_port *p = &c->dom->ports[pn];
    p->state = HYP_PORT_UNBOUND;
    p->remote_dom = self_domid(c, remote);
    bind_to(c, p, pn, bell);
    reply_port(c, h, 0, pn);
    return true;
}

static bool do_bind_interdomain(struct hyp_conn *c, const struct xsim_hdr *h,
                                const struct hyp_bind_req *req, int bell)
{
    if (c->restrict_dom != HYP_NONE && c->restrict_dom != req->remote_dom) {
        reply_port(c, h, EACCES, 0);
        return false;
    }
    struct hyp_dom *ld = c->dom;
    struct hyp_dom *rd = hyp_dom_find(self_domid(c, req->remote_dom));
    if (!rd) {
        reply_port(c, h, ESRCH, 0);
        return false;
    }
    uint32_t lpn;
    int err = get_free_port(ld, &lpn);
    if (err) {
        reply_port(c, h, err, 0);
        return false;
    }
    struct hyp_port *rp = port_get(rd, req->remote_port);
    if (!rp || rp->state != HYP_PORT_UNBOUND || rp->remote_dom != ld->domid) {
        reply_port(c, h, EINVAL, 0);
        return false;
    }
    struct hyp_port *lp = &ld->ports[lpn];
    lp->state = HYP_PORT_INTERDOMAIN;
    lp->remote_dom = (uint16_t)rd->domid;
    lp->remote_port = req->remote_port;
    rp->state = HYP_PORT_INTERDOMAIN;
    rp->remote_dom = (uint16_t)ld->domid;
    rp->remote_port = lpn;
    bump(rp, req->remote_port);
    bind_to(c, lp, lpn, bell);
    reply_port(c, h, 0, lpn);
    /* Xen: "We may have lost notifications on the remote unbound port. Fix
     * that up here by conservatively always setting a notification on the
     * local port." The new handle sees one event at once. */
    ring(lp);
    return true;
}

static bool do_bind_virq(struct hyp_conn *c, const struct xsim_hdr *h, uint32_t virq, int bell)
{
    if (c->restrict_dom != HYP_NONE) {
        reply_port(c, h, EACCES, 0);
        return false;
    }
    /* Only VIRQ_DOM_EXC is simulated; Xen would also take the per-vcpu ones. */
    if (virq >= NR_VIRQS || virq != VIRQ_DOM_EXC) {
        reply_port(c, h, EINVAL, 0);
        return false;
    }
    struct hyp_dom *d = c->dom;
    if (d->virq_port[virq]) {
        reply_port(c, h, EEXIST, 0);
        return false;
    }
    uint32_t pn;
    int err = get_free_port(d, &pn);
    if (err) {
        reply_port(c, h, err, 0);
        return false;
    }
    struct hyp_port *p = &d->ports[pn];
    p->state = HYP_PORT_VIRQ;
    p->virq = virq;
    d->virq_port[virq] = pn;
    bind_to(c, p, pn, bell);
    reply_port(c, h, 0, pn);
    return true;
}

/* A doorbell must be the sending end of a unix datagram socket: the daemon
 * and the peer only ever send() on it with MSG_DONTWAIT, which no other kind
 * of fd would keep from blocking. */
static bool is_bell(int fd)
{
    int v;
    socklen_t l = sizeof(v);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &l) < 0 || v != AF_UNIX)
        return false;
    l = sizeof(v);
    return getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &l) == 0 && v == SOCK_DGRAM;
}

static bool is_bind(uint32_t op)
{
    return op == HYP_EVT_BIND_UNBOUND || op == HYP_EVT_BIND_INTERDOMAIN || op == HYP_EVT_BIND_VIRQ;
}

void hyp_evt_dispatch(struct hyp_conn *c, const struct xsim_hdr *h, const void *body, int *fds,
                      unsigned nfds)
{
    struct hyp_dom *d = c->dom;
    struct hyp_bind_req req;
    uint32_t v = 0;
    bool ok = h->op == HYP_EVT_BIND_INTERDOMAIN ? h->len == sizeof(req) : h->len == sizeof(v);
    if (!ok || (nfds && !is_bind(h->op)) || nfds > 1) {
        hyp_close_fds(fds, nfds);
        c->dead = true; /* malformed */
        return;
    }
    if (h->op == HYP_EVT_BIND_INTERDOMAIN)
        memcpy(&req, body, sizeof(req));
    else
        memcpy(&v, body, sizeof(v));
    if (is_bind(h->op) && (nfds != 1 || !is_bell(fds[0]))) {
        hyp_close_fds(fds, nfds);
        reply_port(c, h, EINVAL, 0);
        return;
    }
    int bell = nfds ? fds[0] : -1;
    bool took = false; /* a bind that failed did not take its doorbell */
    struct hyp_port *p;
    switch (h->op) {
    case HYP_EVT_NOTIFY:
        p = port_get(d, v);
        if (p && p->h == c)
            send_from(d, p);
        break;
    case HYP_EVT_UNMASK:
        break; /* masking is the library's (hyp_proto.h) */
    case HYP_EVT_PEER:
        p = port_get(d, v);
        if (!p || p->h != c)
            reply_port(c, h, ENOTCONN, 0);
        else
            reply_port(c, h, 0, v);
        break;
    case HYP_EVT_BIND_UNBOUND:
        took = do_bind_unbound(c, h, v, bell);
        break;
    case HYP_EVT_BIND_INTERDOMAIN:
        took = do_bind_interdomain(c, h, &req, bell);
        break;
    case HYP_EVT_BIND_VIRQ:
        took = do_bind_virq(c, h, v, bell);
        break;
    case HYP_EVT_UNBIND:
        p = port_get(d, v);
        if (v >= HYP_NR_PORTS) {
            hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        } else if (!p || p->h != c) {
            hyp_reply(c, h, ENOTCONN, NULL, 0, NULL, 0);
        } else {
            unbind(d, p);
            hyp_reply(c, h, 0, NULL, 0, NULL, 0);
        }
        break;
    case HYP_EVT_RESTRICT:
        if (c->restrict_dom != HYP_NONE) {
            hyp_reply(c, h, EACCES, NULL, 0, NULL, 0);
        } else if (v == 0 || v >= DOMID_FIRST_RESERVED) {
            hyp_reply(c, h, EINVAL, NULL, 0, NULL, 0);
        } else {
            c->restrict_dom = v;
            hyp_reply(c, h, 0, NULL, 0, NULL, 0);
        }
        break;
    default:
        c->dead = true; /* an unknown message is fatal */
        break;
    }
    if (bell >= 0 && !took)
        close(bell);
}
