/* xsim_ctl.c - libxensim-client: synchronous requests on xensim's control socket. */
#define _GNU_SOURCE
#include "xsim_ctl.h"

#include "msg.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct xsim_ctl {
    int fd;
    uint32_t seq;
    char err[512];
    char *buf; /* XSIM_MSG_MAX reply buffer */
};

struct xsim_ctl *xsim_ctl_open(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/ctl.sock", dir) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    struct xsim_ctl *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->buf = malloc(XSIM_MSG_MAX);
    c->fd = xsim_connect(path);
    if (!c->buf || c->fd < 0) {
        int e = errno;
        xsim_ctl_close(c);
        errno = e;
        return NULL;
    }
    return c;
}

void xsim_ctl_close(struct xsim_ctl *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
    free(c);
}

const char *xsim_ctl_error(const struct xsim_ctl *c)
{
    return c->err;
}

int xsim_ctl_fd(const struct xsim_ctl *c)
{
    return c->fd;
}

/* A reply whose size is not the one the protocol fixes. */
static int malformed(struct xsim_ctl *c, const char *what)
{
    snprintf(c->err, sizeof(c->err), "malformed %s reply from xensimd", what);
    errno = EPROTO;
    return -1;
}

/* Copy one ctl_dominfo out of the reply buffer, its name NUL-terminated. */
static void copy_dominfo(struct ctl_dominfo *out, const void *src)
{
    memcpy(out, src, sizeof(*out));
    out->name[sizeof(out->name) - 1] = 0;
}

/* One request, one reply. Returns the reply body length, or -1. */
static long call(struct xsim_ctl *c, uint32_t op, const void *body, uint32_t len, const int *fds,
                 unsigned nfds)
{
    c->err[0] = 0;
    struct xsim_hdr h = {.op = op, .seq = ++c->seq, .len = len};
    if (xsim_send(c->fd, &h, body, fds, nfds) < 0) {
        snprintf(c->err, sizeof(c->err), "sending to xensimd: %s", strerror(errno));
        return -1;
    }
    struct xsim_hdr r;
    unsigned n0 = 0;
    int rc = xsim_recv(c->fd, &r, c->buf, XSIM_MSG_MAX, NULL, &n0);
    if (rc <= 0) {
        if (rc == 0)
            errno = ECONNRESET;
        snprintf(c->err, sizeof(c->err), "reply from xensimd: %s", strerror(errno));
        return -1;
    }
    if (r.seq != h.seq || r.op != op) {
        snprintf(c->err, sizeof(c->err), "reply from xensimd out of order");
        errno = EPROTO;
        return -1;
    }
    if (r.err) {
        if (r.len && memchr(c->buf, 0, r.len))
            snprintf(c->err, sizeof(c->err), "%s", c->buf);
        else
            snprintf(c->err, sizeof(c->err), "%s", strerror(r.err));
        errno = r.err;
        return -1;
    }
    return r.len;
}

static int call_domid(struct xsim_ctl *c, uint32_t op, unsigned domid)
{
    uint32_t v = domid;
    return call(c, op, &v, sizeof(v), NULL, 0) < 0 ? -1 : 0;
}

int xsim_ctl_create(struct xsim_ctl *c, const char *name, char *const *argv, char *const *envp,
                    const char *cwd, const int fds[3], struct ctl_dominfo *out)
{
    struct ctl_create cc;
    memset(&cc, 0, sizeof(cc));
    if (name && strlen(name) >= sizeof(cc.name)) {
        snprintf(c->err, sizeof(c->err), "domain name too long (max %d)", CTL_NAME_MAX - 1);
        errno = ENAMETOOLONG;
        return -1;
    }
    if (name)
        strcpy(cc.name, name);
    size_t len = sizeof(cc);
    for (; argv[cc.argc]; cc.argc++)
        len += strlen(argv[cc.argc]) + 1;
    for (; envp && envp[cc.envc]; cc.envc++)
        len += strlen(envp[cc.envc]) + 1;
    len += strlen(cwd) + 1;
    if (len > XSIM_MSG_MAX) {
        snprintf(c->err, sizeof(c->err), "command line and environment too large");
        errno = E2BIG;
        return -1;
    }
    char *body = malloc(len);
    if (!body) {
        snprintf(c->err, sizeof(c->err), "create: %s", strerror(errno));
        return -1;
    }
    memcpy(body, &cc, sizeof(cc));
    size_t off = sizeof(cc);
    for (uint32_t i = 0; i < cc.argc; i++)
        off += (size_t)(stpcpy(body + off, argv[i]) - (body + off)) + 1;
    for (uint32_t i = 0; i < cc.envc; i++)
        off += (size_t)(stpcpy(body + off, envp[i]) - (body + off)) + 1;
    strcpy(body + off, cwd);
    long n = call(c, CTL_CREATE, body, (uint32_t)len, fds, 3);
    free(body);
    if (n < 0)
        return -1;
    if ((size_t)n != sizeof(*out))
        return malformed(c, "create");
    copy_dominfo(out, c->buf);
    return 0;
}

int xsim_ctl_destroy(struct xsim_ctl *c, unsigned domid)
{
    return call_domid(c, CTL_DESTROY, domid);
}

int xsim_ctl_pause(struct xsim_ctl *c, unsigned domid)
{
    return call_domid(c, CTL_PAUSE, domid);
}

int xsim_ctl_unpause(struct xsim_ctl *c, unsigned domid)
{
    return call_domid(c, CTL_UNPAUSE, domid);
}

int xsim_ctl_shutdown(struct xsim_ctl *c, unsigned domid, unsigned reason)
{
    uint32_t v[2] = {domid, reason};
    return call(c, CTL_SHUTDOWN, v, sizeof(v), NULL, 0) < 0 ? -1 : 0;
}

int xsim_ctl_info(struct xsim_ctl *c, unsigned domid, struct ctl_dominfo *out)
{
    uint32_t v = domid;
    long n = call(c, CTL_INFO, &v, sizeof(v), NULL, 0);
    if (n < 0)
        return -1;
    if ((size_t)n != sizeof(*out))
        return malformed(c, "info");
    copy_dominfo(out, c->buf);
    return 0;
}

int xsim_ctl_list(struct xsim_ctl *c, struct ctl_dominfo **out, unsigned *n)
{
    long len = call(c, CTL_LIST, NULL, 0, NULL, 0);
    if (len < 0)
        return -1;
    if ((size_t)len % sizeof(**out))
        return malformed(c, "list");
    unsigned count = (unsigned)((size_t)len / sizeof(**out));
    struct ctl_dominfo *v = malloc(len ? (size_t)len : 1);
    if (!v) {
        snprintf(c->err, sizeof(c->err), "list: %s", strerror(errno));
        return -1;
    }
    for (unsigned i = 0; i < count; i++)
        copy_dominfo(&v[i], c->buf + i * sizeof(*v));
    *out = v;
    *n = count;
    return 0;
}

int xsim_ctl_paths(struct xsim_ctl *c, struct ctl_paths *out)
{
    long n = call(c, CTL_PATHS, NULL, 0, NULL, 0);
    if (n < 0)
        return -1;
    if ((size_t)n != sizeof(*out))
        return malformed(c, "paths");
    memcpy(out, c->buf, sizeof(*out));
    out->dir[sizeof(out->dir) - 1] = 0;
    out->simlib[sizeof(out->simlib) - 1] = 0;
    return 0;
}

int xsim_ctl_stop(struct xsim_ctl *c)
{
    return call(c, CTL_STOP, NULL, 0, NULL, 0) < 0 ? -1 : 0;
}

int xsim_ctl_lookup(struct xsim_ctl *c, const char *dom, unsigned *domid)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(dom, &end, 10);
    if (*dom && !*end && errno == 0 && v < XSIM_DOMID_FIRST_RESERVED) {
        *domid = (unsigned)v;
        return 0;
    }
    struct ctl_dominfo *list;
    unsigned n;
    if (xsim_ctl_list(c, &list, &n) < 0)
        return -1;
    for (unsigned i = 0; i < n; i++) {
        if (strncmp(list[i].name, dom, CTL_NAME_MAX) == 0) {
            *domid = list[i].domid;
            free(list);
            return 0;
        }
    }
    free(list);
    snprintf(c->err, sizeof(c->err), "no domain named '%s'", dom);
    errno = ESRCH;
    return -1;
}
