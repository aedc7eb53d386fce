/* xs_wire - xensim's xenstored (xensim/daemon): a client's bytes on its
 * connection, as xs_conn.c reads them (the xsd_sockmsg header, the length
 * bound, the payload) and dispatches them to every request handler
 * (xs_nodereq.c, xs_watch.c, xs_trans.c, xs_perms.c, xs_path.c,
 * xs_control.c, xs_domops.c) over a fresh store (xs_server_init), with the
 * daemon's own event loop (common/evloop.c) on a socketpair; the replies
 * are read and thrown away.
 *
 * The hypervisor's side (domain.c) is not linked: dom_exists says domains
 * 0..7 exist.
 *
 * Input: one byte choosing the client's domain (0, a guest, a driver
 * domain), then the byte stream the client sends. */
#define _GNU_SOURCE
#include "domain.h"
#include "evloop.h"
#include "fuzz.h"
#include "xs_conn.h"
#include "xs_server.h"

#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

static struct evloop *L;

bool dom_exists(unsigned domid)
{
    return domid < 8;
}

struct client {
    int fd;
    uint64_t timer;
};

static void on_client(void *opaque, int fd, uint32_t events)
{
    struct client *c = opaque;
    char buf[65536];
    (void)events;
    ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        evloop_stop(L); /* the daemon closed the connection: all processed */
    (void)c;
}

static void on_timeout(void *opaque)
{
    struct client *c = opaque;
    c->timer = 0;
    evloop_stop(L);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    signal(SIGPIPE, SIG_IGN);
    L = evloop_create();
    return L ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const unsigned doms[] = {0, 1, 2, 7};
    unsigned domid = doms[data[0] % 4];
    FZ_CHECK(xs_server_init(L) == 0);
    FZ_CHECK(xs_server_domain_introduce(1, "guest") == 0);
    FZ_CHECK(xs_server_domain_introduce(2, "drv") == 0);
    int sv[2];
    FZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    int bufsz = 1 << 20;
    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
    FZ_CHECK(xs_conn_new(sv[0], domid) == 0);
    /* The client's whole stream, then its end: the daemon closes after the last message. */
    size_t off = 1;
    while (off < size) {
        ssize_t k = send(sv[1], data + off, size - off, MSG_DONTWAIT);
        if (k <= 0)
            break;
        off += (size_t)k;
    }
    shutdown(sv[1], SHUT_WR);
    struct client c = {.fd = sv[1]};
    FZ_CHECK(evloop_fd_create(L, sv[1], EPOLLIN, on_client, &c) == 0);
    c.timer = evloop_timer_create(L, 2000, on_timeout, &c);
    evloop_run(L);
    evloop_timer_delete(L, c.timer);
    evloop_fd_delete(L, sv[1]);
    close(sv[1]);
    xs_server_fini();
    /* A round for what the daemon left to its loop (the closed connection's reaping). */
    uint64_t t = evloop_timer_create(L, 0, on_timeout, &c);
    evloop_run(L);
    evloop_timer_delete(L, t);
    return 0;
}
