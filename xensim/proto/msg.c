/* msg.c - SOCK_SEQPACKET messages with fd passing. */
#define _GNU_SOURCE
#include "msg.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int xsim_send(int sock, const struct xsim_hdr *h, const void *body, const int *fds, unsigned nfds)
{
    if (h->len > XSIM_MSG_MAX || nfds > XSIM_MSG_MAX_FDS) {
        errno = EMSGSIZE;
        return -1;
    }
    struct iovec iov[2] = {{(void *)h, sizeof(*h)}, {(void *)body, h->len}};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = h->len ? 2 : 1};
    union {
        char buf[CMSG_SPACE(sizeof(int) * XSIM_MSG_MAX_FDS)];
        struct cmsghdr align;
    } u;
    if (nfds) {
        m.msg_control = u.buf;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    for (;;) {
        ssize_t n = sendmsg(sock, &m, MSG_NOSIGNAL);
        if (n >= 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

static void close_fds(int *fds, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        close(fds[i]);
}

int xsim_recv(int sock, struct xsim_hdr *h, void *body, size_t max, int *fds, unsigned *nfds)
{
    unsigned cap = nfds ? *nfds : 0;
    if (nfds)
        *nfds = 0;
    struct iovec iov[2] = {{h, sizeof(*h)}, {body, max}};
    union {
        char buf[CMSG_SPACE(sizeof(int) * XSIM_MSG_MAX_FDS)];
        struct cmsghdr align;
    } u;
    struct msghdr m = {
        .msg_iov = iov, .msg_iovlen = 2, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
    ssize_t n;
    do {
        n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if (n == 0)
        return 0;

    int got[XSIM_MSG_MAX_FDS];
    unsigned ngot = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        unsigned k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (unsigned i = 0; i < k && ngot < XSIM_MSG_MAX_FDS; i++)
            memcpy(&got[ngot++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
    }
    int bad = (size_t)n < sizeof(*h) || (size_t)n - sizeof(*h) != h->len ||
              (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || ngot > cap;
    if (bad) {
        close_fds(got, ngot);
        errno = EPROTO;
        return -1;
    }
    if (ngot)
        memcpy(fds, got, sizeof(int) * ngot);
    if (nfds)
        *nfds = ngot;
    return 1;
}

static int fill_addr(struct sockaddr_un *a, const char *path)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(a->sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(a->sun_path, path);
    return 0;
}

int xsim_connect(const char *path)
{
    struct sockaddr_un a;
    if (fill_addr(&a, path) < 0)
        return -1;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
        int e = errno;
        close(s);
        errno = e;
        return -1;
    }
    return s;
}

int xsim_listen(const char *path)
{
    struct sockaddr_un a;
    if (fill_addr(&a, path) < 0)
        return -1;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0)
        return -1;
    unlink(path);
    if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 64) < 0) {
        int e = errno;
        close(s);
        errno = e;
        return -1;
    }
    return s;
}

void xsim_ring_bell(int fd)
{
    static const char one = 1;
    (void)send(fd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}
