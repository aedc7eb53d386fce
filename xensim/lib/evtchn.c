/* evtchn.c - drop-in libxenevtchn.so.1 for xensim, with Debian's symbols and
 * version nodes (libxenevtchn.map) and the semantics of Linux's evtchn
 * device. A handle is a connection to the daemon plus an event socket whose
 * read end is xenevtchn_fd(); see ../proto/hyp_proto.h.
 *
 * xenevtchn_fdopen() cannot rebuild a handle from an fd here (the handle is
 * two sockets and a port table), so it fails with EOPNOTSUPP.
 */
#define _GNU_SOURCE
#include "client.h"

#include "hyp_proto.h"
#include "msg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xenevtchn.h>

struct xenevtchn_handle {
    struct xsim_client c;
    int evfd;
    uint64_t owned[HYP_NR_PORTS / 64]; /* ports bound by this handle */
};

static bool owned(xenevtchn_handle *xce, evtchn_port_t port)
{
    return port < HYP_NR_PORTS &&
           (__atomic_load_n(&xce->owned[port / 64], __ATOMIC_ACQUIRE) >> (port % 64) & 1);
}

static void set_owned(xenevtchn_handle *xce, evtchn_port_t port, bool on)
{
    uint64_t bit = (uint64_t)1 << (port % 64);
    if (on)
        __atomic_fetch_or(&xce->owned[port / 64], bit, __ATOMIC_RELEASE);
    else
        __atomic_fetch_and(&xce->owned[port / 64], ~bit, __ATOMIC_RELEASE);
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
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | (cloexec ? SOCK_CLOEXEC : 0), 0, sv) < 0) {
        int e = errno;
        xsim_client_log(logger, "evtchn", e, "could not create the event socket");
        free(xce);
        errno = e;
        return NULL;
    }
    int rc = xsim_client_open(&xce->c, HYP_KIND_EVTCHN, cloexec, sv[1], logger, "evtchn");
    int e = errno;
    close(sv[1]); /* the daemon has its copy */
    if (rc < 0) {
        close(sv[0]);
        free(xce);
        errno = e;
        return NULL;
    }
    xce->evfd = sv[0];
    return xce;
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
    close(xce->evfd);
    free(xce);
    return 0;
}

XSIM_EXPORT int xenevtchn_fd(xenevtchn_handle *xce)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    return xce->evfd;
}

XSIM_EXPORT int xenevtchn_notify(xenevtchn_handle *xce, evtchn_port_t port)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    if (!owned(xce, port)) {
        errno = ENOTCONN; /* evtchn: not bound by this handle */
        return -1;
    }
    struct hyp_u32 req = {port};
    return xsim_client_post(&xce->c, HYP_EVT_NOTIFY, &req, sizeof(req));
}

static xenevtchn_port_or_error_t bind_port(xenevtchn_handle *xce, uint32_t op, const void *req,
                                           size_t len)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    struct hyp_u32 rep;
    size_t rlen;
    if (xsim_client_call(&xce->c, op, req, len, NULL, 0, &rep, sizeof(rep), &rlen, NULL, NULL) < 0)
        return -1;
    if (rlen != sizeof(rep) || rep.v == 0 || rep.v >= HYP_NR_PORTS) {
        errno = EPROTO;
        return -1;
    }
    set_owned(xce, rep.v, true);
    return (xenevtchn_port_or_error_t)rep.v;
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
    set_owned(xce, port, false);
    return 0;
}

XSIM_EXPORT xenevtchn_port_or_error_t xenevtchn_pending(xenevtchn_handle *xce)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    struct xsim_hdr h;
    struct hyp_u32 ev;
    int r = xsim_recv(xce->evfd, &h, &ev, sizeof(ev), NULL, NULL);
    if (r < 0)
        return -1; /* EAGAIN if the caller made the fd non-blocking */
    if (r == 0) {
        errno = ECONNRESET; /* the daemon is gone, or the domain */
        return -1;
    }
    if (h.op != HYP_EVT_EVENT || h.len != sizeof(ev) || ev.v == 0 || ev.v >= HYP_NR_PORTS) {
        errno = EPROTO;
        return -1;
    }
    return (xenevtchn_port_or_error_t)ev.v;
}

XSIM_EXPORT int xenevtchn_unmask(xenevtchn_handle *xce, evtchn_port_t port)
{
    if (!xce) {
        errno = EINVAL;
        return -1;
    }
    /* evtchn's write() ignores ports the handle has not bound. */
    if (!owned(xce, port))
        return 0;
    struct hyp_u32 req = {port};
    return xsim_client_post(&xce->c, HYP_EVT_UNMASK, &req, sizeof(req));
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
