/* ctl_server.c - serves ctl_proto.h requests from host processes. */
#define _GNU_SOURCE
#include "ctl_server.h"

#include "domain.h"
#include "msg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_CLIENTS 64

static struct {
    struct evloop *loop;
    int lsock;
    char path[300];
    int clients[MAX_CLIENTS];
    unsigned nclients;
} C = {.lsock = -1};

static void drop_client(int fd)
{
    evloop_fd_delete(C.loop, fd);
    close(fd);
    for (unsigned i = 0; i < C.nclients; i++) {
        if (C.clients[i] == fd) {
            C.clients[i] = C.clients[--C.nclients];
            break;
        }
    }
}

static void reply(int fd, const struct xsim_hdr *req, int err, const void *body, uint32_t len)
{
    struct xsim_hdr h = {.op = req->op, .seq = req->seq, .err = err, .len = len};
    if (xsim_send(fd, &h, body, NULL, 0) < 0)
        fprintf(stderr, "xensimd: control reply: %s\n", strerror(errno));
}

static void reply_err(int fd, const struct xsim_hdr *req, int err, const char *msg)
{
    reply(fd, req, err, msg, (uint32_t)strlen(msg) + 1);
}

static int get_domid(const struct xsim_hdr *h, const char *body, unsigned *domid)
{
    uint32_t v;
    if (h->len < sizeof(v))
        return -1;
    memcpy(&v, body, sizeof(v));
    *domid = v;
    return 0;
}

/* Split n NUL-terminated strings out of buf[0..len). Returns the offset after
 * them, or -1 if buf ends early. */
static long take_strings(const char *buf, size_t len, size_t off, uint32_t n, char **out)
{
    for (uint32_t i = 0; i < n; i++) {
        if (off >= len)
            return -1;
        const char *end = memchr(buf + off, 0, len - off);
        if (!end)
            return -1;
        out[i] = (char *)buf + off;
        off = (size_t)(end - buf) + 1;
    }
    return (long)off;
}

static void do_create(int fd, const struct xsim_hdr *h, char *body, int *fds, unsigned nfds)
{
    struct ctl_create cc;
    char err[512] = "";
    if (h->len < sizeof(cc) || nfds != 3) {
        reply_err(fd, h, EINVAL, "malformed create request");
        return;
    }
    memcpy(&cc, body, sizeof(cc));
    cc.name[CTL_NAME_MAX - 1] = 0;
    if (cc.argc == 0 || cc.argc > 4096 || cc.envc > 4096) {
        reply_err(fd, h, EINVAL, "bad argument or environment count");
        return;
    }
    char **argv = calloc(cc.argc + 1, sizeof(*argv));
    char **envp = calloc(cc.envc + 1, sizeof(*envp));
    char *cwd = NULL;
    long off = sizeof(cc);
    if (argv && envp) {
        off = take_strings(body, h->len, (size_t)off, cc.argc, argv);
        if (off >= 0)
            off = take_strings(body, h->len, (size_t)off, cc.envc, envp);
        if (off >= 0)
            off = take_strings(body, h->len, (size_t)off, 1, &cwd);
    }
    if (!argv || !envp || off < 0) {
        reply_err(fd, h, argv && envp ? EINVAL : ENOMEM, "malformed create request");
    } else {
        struct dom_create_args a = {.name = cc.name,
                                    .argv = argv,
                                    .envp = envp,
                                    .cwd = cwd,
                                    .fds = {fds[0], fds[1], fds[2]}};
        unsigned domid;
        if (dom_create(&a, &domid, err, sizeof(err)) < 0) {
            reply_err(fd, h, errno, err);
        } else {
            struct ctl_dominfo info;
            dom_info(domid, &info);
            reply(fd, h, 0, &info, sizeof(info));
        }
    }
    free(argv);
    free(envp);
}

static void handle(int fd, const struct xsim_hdr *h, char *body, int *fds, unsigned nfds)
{
    unsigned domid = 0;
    int needs_domid = h->op == CTL_DESTROY || h->op == CTL_PAUSE || h->op == CTL_UNPAUSE ||
                      h->op == CTL_SHUTDOWN || h->op == CTL_INFO;
    if (needs_domid && get_domid(h, body, &domid) < 0) {
        reply_err(fd, h, EINVAL, "request needs a domid");
        return;
    }
    int r = 0;
    switch (h->op) {
    case CTL_CREATE:
        do_create(fd, h, body, fds, nfds);
        return;
    case CTL_DESTROY:
        r = dom_destroy(domid);
        break;
    case CTL_PAUSE:
        r = dom_pause(domid);
        break;
    case CTL_UNPAUSE:
        r = dom_unpause(domid);
        break;
    case CTL_SHUTDOWN: {
        uint32_t reason;
        if (h->len < 8) {
            reply_err(fd, h, EINVAL, "shutdown needs a reason");
            return;
        }
        memcpy(&reason, body + 4, sizeof(reason));
        if (reason > DOM_SHUTDOWN_WATCHDOG) {
            reply_err(fd, h, EINVAL, "unknown shutdown reason");
            return;
        }
        r = dom_shutdown(domid, (enum dom_shutdown_reason)reason);
        break;
    }
    case CTL_INFO: {
        struct ctl_dominfo info;
        if (dom_info(domid, &info) == 0) {
            reply(fd, h, 0, &info, sizeof(info));
            return;
        }
        r = -1;
        break;
    }
    case CTL_LIST: {
        unsigned max = XSIM_MSG_MAX / sizeof(struct ctl_dominfo);
        struct ctl_dominfo *v = calloc(max, sizeof(*v));
        if (!v) {
            reply_err(fd, h, ENOMEM, "out of memory");
            return;
        }
        unsigned n = dom_list(v, max);
        if (n > max)
            n = max;
        reply(fd, h, 0, v, (uint32_t)(n * sizeof(*v)));
        free(v);
        return;
    }
    case CTL_PATHS: {
        struct ctl_paths p;
        memset(&p, 0, sizeof(p));
        snprintf(p.dir, sizeof(p.dir), "%s", dom_rundir());
        snprintf(p.simlib, sizeof(p.simlib), "%s", dom_simlib());
        reply(fd, h, 0, &p, sizeof(p));
        return;
    }
    case CTL_STOP:
        reply(fd, h, 0, NULL, 0);
        evloop_stop(C.loop);
        return;
    default:
        reply_err(fd, h, EINVAL, "unknown control operation");
        return;
    }
    if (r < 0) {
        char msg[128];
        snprintf(msg, sizeof(msg), "domain %u: %s", domid, strerror(errno));
        reply_err(fd, h, errno, msg);
    } else {
        reply(fd, h, 0, NULL, 0);
    }
}

static void on_client(void *opaque, int fd, uint32_t events)
{
    (void)opaque;
    (void)events;
    static char body[XSIM_MSG_MAX];
    struct xsim_hdr h;
    int fds[3];
    unsigned nfds = 3;
    int r = xsim_recv(fd, &h, body, sizeof(body), fds, &nfds);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (r <= 0) {
        drop_client(fd);
        return;
    }
    handle(fd, &h, body, fds, nfds);
    for (unsigned i = 0; i < nfds; i++)
        close(fds[i]);
}

static void on_accept(void *opaque, int lfd, uint32_t events)
{
    (void)opaque;
    (void)events;
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    if (C.nclients == MAX_CLIENTS || evloop_fd_create(C.loop, fd, EPOLLIN, on_client, NULL) < 0) {
        close(fd);
        return;
    }
    C.clients[C.nclients++] = fd;
}

int ctl_server_init(struct evloop *l, const char *path)
{
    C.loop = l;
    if (snprintf(C.path, sizeof(C.path), "%s", path) >= (int)sizeof(C.path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    C.lsock = xsim_listen(path);
    if (C.lsock < 0)
        return -1;
    chmod(path, 0600);
    return evloop_fd_create(l, C.lsock, EPOLLIN, on_accept, NULL);
}

void ctl_server_fini(void)
{
    while (C.nclients)
        drop_client(C.clients[0]);
    if (C.lsock >= 0) {
        evloop_fd_delete(C.loop, C.lsock);
        close(C.lsock);
        unlink(C.path);
        C.lsock = -1;
    }
}
