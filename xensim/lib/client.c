/* client.c - a library handle's connection to xensim's hypervisor. */
#define _GNU_SOURCE
#include "client.h"

#include "hyp_proto.h"
#include "msg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xentoollog.h>

void xsim_client_log(struct xentoollog_logger *logger, const char *ctx, int errnoval,
                     const char *fmt, ...)
{
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    if (logger && logger->vmessage) {
        logger->vmessage(logger, XTL_ERROR, errnoval, ctx, fmt, ap);
    } else {
        /* What xtl_createlogger_stdiostream(stderr, ...) prints. */
        char msg[512];
        vsnprintf(msg, sizeof(msg), fmt, ap);
        if (errnoval > 0)
            fprintf(stderr, "%s: error: %s: %s\n", ctx, msg, strerror(errnoval));
        else
            fprintf(stderr, "%s: error: %s\n", ctx, msg);
    }
    va_end(ap);
    errno = saved;
}

int xsim_client_open(struct xsim_client *c, uint32_t kind, int cloexec, int evfd, int *rfd,
                     struct xentoollog_logger *logger, const char *ctx)
{
    unsigned nrfd = rfd ? 1 : 0;
    if (rfd)
        *rfd = -1;
    memset(c, 0, sizeof(*c));
    c->sock = -1;
    c->logger = logger;
    c->ctx = ctx;
    const char *path = getenv("XENSIM_HYP");
    if (!path || !*path) {
        errno = ENOENT;
        xsim_client_log(logger, ctx, errno, "XENSIM_HYP is not set (not running under xensim)");
        return -1;
    }
    c->sock = xsim_connect(path);
    if (c->sock < 0) {
        xsim_client_log(logger, ctx, errno, "could not connect to %s", path);
        return -1;
    }
    if (!cloexec && fcntl(c->sock, F_SETFD, 0) < 0)
        goto fail;
    if (pthread_mutex_init(&c->lock, NULL)) {
        errno = ENOMEM;
        goto fail;
    }
    struct hyp_hello req = {.version = HYP_PROTO_VERSION, .kind = kind};
    struct hyp_hello_reply rep;
    size_t len;
    int rc = xsim_client_call(c, HYP_HELLO, &req, sizeof(req), &evfd, evfd >= 0 ? 1 : 0, &rep,
                              sizeof(rep), &len, rfd, rfd ? &nrfd : NULL);
    if (rc == 0 && (len != sizeof(rep) || (rfd && nrfd != 1))) {
        if (rfd && nrfd)
            close(*rfd);
        errno = EPROTO;
        rc = -1;
    }
    if (rc < 0) {
        int e = errno;
        pthread_mutex_destroy(&c->lock);
        errno = e;
        goto fail;
    }
    c->domid = rep.domid;
    return 0;
fail:
    xsim_client_log(logger, ctx, errno, "could not open a handle at %s", path);
    int e = errno;
    close(c->sock);
    c->sock = -1;
    errno = e;
    return -1;
}

void xsim_client_close(struct xsim_client *c)
{
    if (c->sock >= 0) {
        close(c->sock);
        pthread_mutex_destroy(&c->lock);
    }
    c->sock = -1;
}

int xsim_client_call(struct xsim_client *c, uint32_t op, const void *req, size_t reqlen,
                     const int *fds, unsigned nfds, void *rep, size_t repmax, size_t *replen,
                     int *rfds, unsigned *nrfds)
{
    unsigned cap = nrfds ? *nrfds : 0;
    if (nrfds)
        *nrfds = 0;
    pthread_mutex_lock(&c->lock);
    struct xsim_hdr h = {.op = op, .seq = ++c->seq, .len = (uint32_t)reqlen};
    int rc = -1, e = 0;
    if (xsim_send(c->sock, &h, req, fds, nfds) < 0) {
        e = errno;
        goto out;
    }
    struct xsim_hdr r;
    unsigned n = cap;
    int got = xsim_recv(c->sock, &r, rep, repmax, rfds, &n);
    if (got <= 0) {
        e = got == 0 ? ECONNRESET : errno;
        goto out;
    }
    if (r.op != op || r.seq != h.seq || r.err < 0) {
        for (unsigned i = 0; i < n; i++)
            close(rfds[i]);
        e = EPROTO;
        goto out;
    }
    if (r.err) {
        for (unsigned i = 0; i < n; i++)
            close(rfds[i]);
        e = r.err;
        goto out;
    }
    if (replen)
        *replen = r.len;
    if (nrfds)
        *nrfds = n;
    rc = 0;
out:
    pthread_mutex_unlock(&c->lock);
    if (rc < 0)
        errno = e;
    return rc;
}

int xsim_client_post(struct xsim_client *c, uint32_t op, const void *req, size_t reqlen)
{
    struct xsim_hdr h = {.op = op, .len = (uint32_t)reqlen};
    return xsim_send(c->sock, &h, req, NULL, 0);
}
