/* hyp_evtchn.c - event channels: Xen's common/event_channel.c semantics for
 * the ports of each domain, and Linux's evtchn driver semantics for the user
 * handles they are bound to.
 *
 * Ports are allocated lowest-free from 1 (port 0 is reserved), as Xen's
 * get_free_port does. Delivery follows Xen's pending bit and the driver's
 * masking: an event sets the port pending; if the port is not masked it is
 * delivered to its handle (one HYP_EVT_EVENT on the handle's event socket),
 * which masks it until the handle unmasks it; an event while masked stays
 * pending and is delivered on unmask. A delivery that finds the event socket
 * full waits in the handle's queue (intrusive, so no allocation per event).
 */
#define _GNU_SOURCE
#include "hyp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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

static void q_remove(struct hyp_conn *c, struct hyp_port *p)
{
    if (p->qprev)
        p->qprev->qnext = p->qnext;
    else
        c->qhead = p->qnext;
    if (p->qnext)
        p->qnext->qprev = p->qprev;
    else
        c->qtail = p->qprev;
    p->qprev = p->qnext = NULL;
    p->queued = false;
}

static void q_append(struct hyp_conn *c, struct hyp_port *p)
{
    p->qnext = NULL;
    p->qprev = c->qtail;
    if (c->qtail)
        c->qtail->qnext = p;
    else
        c->qhead = p;
    c->qtail = p;
    p->queued = true;
}

static void ev_unwatch(struct hyp_conn *c)
{
    if (c->ev_watched) {
        evloop_fd_delete(hyp_loop, c->evfd);
        c->ev_watched = false;
    }
}

static void flush(struct hyp_conn *c);

static void ev_cb(void *opaque, int fd, uint32_t events)
{
    struct hyp_conn *c = opaque;
    (void)fd;
    if (events & (EPOLLHUP | EPOLLERR)) {
        while (c->qhead)
            q_remove(c, c->qhead); /* the handle is going away */
        ev_unwatch(c);
        return;
    }
    flush(c);
}

static void flush(struct hyp_conn *c)
{
    while (c->qhead) {
        struct hyp_port *p = c->qhead;
        struct xsim_hdr h = {.op = HYP_EVT_EVENT, .len = sizeof(struct hyp_u32)};
        struct hyp_u32 b = {port_no(c->dom, p)};
        if (xsim_send(c->evfd, &h, &b, NULL, 0) < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (!c->ev_watched && evloop_fd_create(hyp_loop, c->evfd, EPOLLOUT, ev_cb, c) == 0)
                    c->ev_watched = true;
                return;
            }
            while (c->qhead)
                q_remove(c, c->qhead); /* the library end is gone */
            break;
        }
        q_remove(c, p);
    }
    ev_unwatch(c);
}

/* The driver's interrupt handler: mask the port and queue it for the handle. */
static void deliver(struct hyp_port *p)
{
    p->masked = true;
    p->pending = false;
    struct hyp_conn *c = p->h;
    if (!c || p->queued)
        return;
    q_append(c, p);
    if (!c->ev_watched)
        flush(c);
}

static void set_pending(struct hyp_port *p)
{
    if (p->pending)
        return;
    p->pending = true;
    if (!p->masked)
        deliver(p);
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
        set_pending(rp);
}

/* EVTCHNOP_close: an interdomain peer becomes unbound (and may bind again). */
static void close_port(struct hyp_dom *d, struct hyp_port *p)
{
    if (p->queued)
        q_remove(p->h, p);
    if (p->state == HYP_PORT_INTERDOMAIN) {
        struct hyp_dom *rd = hyp_dom_find(p->remote_dom);
        struct hyp_port *rp = port_get(rd, p->remote_port);
        if (rp && rp->state == HYP_PORT_INTERDOMAIN && rp->remote_dom == d->domid &&
            rp->remote_port == port_no(d, p)) {
            rp->state = HYP_PORT_UNBOUND;
            rp->remote_port = 0;
        }
    } else if (p->state == HYP_PORT_VIRQ && p->virq < 32) {
        d->virq_port[p->virq] = 0;
    }
    memset(p, 0, sizeof(*p));
}

/* The handle lets go of the port; it closes unless an unmap notification holds it. */
static void unbind(struct hyp_dom *d, struct hyp_port *p)
{
    if (p->queued)
        q_remove(p->h, p);
    p->h = NULL;
    if (!p->notify_refs)
        close_port(d, p);
}

static void bind_to(struct hyp_conn *c, struct hyp_port *p)
{
    p->h = c;
    p->masked = false;
    p->pending = false;
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
    set_pending(&d0->ports[d0->virq_port[virq]]);
}

/* --- handles ------------------------------------------------------------------ */

int hyp_evt_conn_open(struct hyp_conn *c, int evfd)
{
    int type;
    socklen_t tl = sizeof(type);
    if (getsockopt(evfd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_SEQPACKET) {
        errno = EINVAL;
        return -1;
    }
    int fl = fcntl(evfd, F_GETFL);
    if (fl < 0 || fcntl(evfd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -1;
    c->evfd = evfd;
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
    while (c->qhead)
        q_remove(c, c->qhead);
    ev_unwatch(c);
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

static bool get_u32(const struct xsim_hdr *h, const void *body, uint32_t *v)
{
    if (h->len != sizeof(*v))
        return false;
    memcpy(v, body, sizeof(*v));
    return true;
}

static void reply_port(struct hyp_conn *c, const struct xsim_hdr *h, int err, uint32_t port)
{
    struct hyp_u32 r = {port};
    hyp_reply(c, h, err, &r, sizeof(r), NULL, 0);
}

static uint16_t self_domid(struct hyp_conn *c, uint32_t v)
{
    uint16_t dom = (uint16_t)v; /* the hypercall's domid_t */
    return dom == DOMID_SELF ? (uint16_t)c->dom->domid : dom;
}

static void do_bind_unbound(struct hyp_conn *c, const struct xsim_hdr *h, uint32_t remote)
{
    if (c->restrict_dom != HYP_NONE) {
        reply_port(c, h, EACCES, 0);
        return;
    }
    uint32_t pn;
    int err = get_free_port(c->dom, &pn);
    if (err) {
        reply_port(c, h, err, 0);
        return;
    }
    struct hyp_port *p = &c->dom->ports[pn];
    p->state = HYP_PORT_UNBOUND;
    p->remote_dom = self_domid(c, remote);
    bind_to(c, p);
    reply_port(c, h, 0, pn);
}

static void do_bind_interdomain(struct hyp_conn *c, const struct xsim_hdr *h, const void *body)
{
    struct hyp_bind_req req;
    if (h->len != sizeof(req)) {
        c->dead = true;
        return;
    }
    memcpy(&req, body, sizeof(req));
    if (c->restrict_dom != HYP_NONE && c->restrict_dom != req.remote_dom) {
        reply_port(c, h, EACCES, 0);
        return;
    }
    struct hyp_dom *ld = c->dom;
    struct hyp_dom *rd = hyp_dom_find(self_domid(c, req.remote_dom));
    if (!rd) {
        reply_port(c, h, ESRCH, 0);
        return;
    }
    uint32_t lpn;
    int err = get_free_port(ld, &lpn);
    if (err) {
        reply_port(c, h, err, 0);
        return;
    }
    struct hyp_port *rp = port_get(rd, req.remote_port);
    if (!rp || rp->state != HYP_PORT_UNBOUND || rp->remote_dom != ld->domid) {
        reply_port(c, h, EINVAL, 0);
        return;
    }
    struct hyp_port *lp = &ld->ports[lpn];
    lp->state = HYP_PORT_INTERDOMAIN;
    lp->remote_dom = (uint16_t)rd->domid;
    lp->remote_port = req.remote_port;
    rp->state = HYP_PORT_INTERDOMAIN;
    rp->remote_dom = (uint16_t)ld->domid;
    rp->remote_port = lpn;
    bind_to(c, lp);
    reply_port(c, h, 0, lpn);
    /* Xen: "We may have lost notifications on the remote unbound port. Fix
     * that up here by conservatively always setting a notification on the
     * local port." The new handle sees one event at once. */
    set_pending(lp);
}

static void do_bind_virq(struct hyp_conn *c, const struct xsim_hdr *h, uint32_t virq)
{
    if (c->restrict_dom != HYP_NONE) {
        reply_port(c, h, EACCES, 0);
        return;
    }
    /* Only VIRQ_DOM_EXC is simulated; Xen would also take the per-vcpu ones. */
    if (virq >= NR_VIRQS || virq != VIRQ_DOM_EXC) {
        reply_port(c, h, EINVAL, 0);
        return;
    }
    struct hyp_dom *d = c->dom;
    if (d->virq_port[virq]) {
        reply_port(c, h, EEXIST, 0);
        return;
    }
    uint32_t pn;
    int err = get_free_port(d, &pn);
    if (err) {
        reply_port(c, h, err, 0);
        return;
    }
    struct hyp_port *p = &d->ports[pn];
    p->state = HYP_PORT_VIRQ;
    p->virq = virq;
    d->virq_port[virq] = pn;
    bind_to(c, p);
    reply_port(c, h, 0, pn);
}

void hyp_evt_dispatch(struct hyp_conn *c, const struct xsim_hdr *h, const void *body, int *fds,
                      unsigned nfds)
{
    if (nfds) {
        hyp_close_fds(fds, nfds);
        c->dead = true;
        return;
    }
    struct hyp_dom *d = c->dom;
    uint32_t v = 0;
    if (h->op != HYP_EVT_BIND_INTERDOMAIN && !get_u32(h, body, &v)) {
        c->dead = true;
        return;
    }
    struct hyp_port *p;
    switch (h->op) {
    case HYP_EVT_NOTIFY:
        p = port_get(d, v);
        if (p && p->h == c)
            send_from(d, p);
        break;
    case HYP_EVT_UNMASK:
        p = port_get(d, v);
        if (p && p->h == c && p->masked) {
            p->masked = false;
            if (p->pending)
                deliver(p);
        }
        break;
    case HYP_EVT_BIND_UNBOUND:
        do_bind_unbound(c, h, v);
        break;
    case HYP_EVT_BIND_INTERDOMAIN:
        do_bind_interdomain(c, h, body);
        break;
    case HYP_EVT_BIND_VIRQ:
        do_bind_virq(c, h, v);
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
}
