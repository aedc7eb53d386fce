/* hyp-hostile - a hostile client of xensim's hypervisor socket: malformed
 * messages, wrong sizes and counts, unexpected or dangerous fds (a FIFO the
 * daemon must not open), requests for another domain's grants, floods. The
 * daemon must answer with errors or drop the connection, never crash, block
 * or leak fds, and must keep serving well-behaved clients.
 *
 *   hyp-hostile A B C      A shares a page with B; C is the attacker
 *
 * $XENSIM_DIR is the sim. Prints "OK hostile" and exits 0, or what failed and 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <xengnttab.h>

#include "hyp_proto.h"

static const char *simdir;
static unsigned A, B, C;

static void fail(int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL line %d: ", line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (errno %d %s)\n", errno, strerror(errno));
    va_end(ap);
    exit(1);
}
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c))                                                                                  \
            fail(__LINE__, __VA_ARGS__);                                                           \
    } while (0)

/* msg.h's header, written out: this program links only Debian's libraries. */
struct hdr {
    uint32_t op, seq;
    int32_t err;
    uint32_t len;
};

static int raw_connect(unsigned dom)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s/dom%u/hyp.sock", simdir, dom);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    CHECK(s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) == 0, "connect %s", a.sun_path);
    return s;
}

/* Send a packet: header (with len as given, maybe a lie), then blen bytes. */
static void raw_send(int s, uint32_t op, uint32_t len, const void *body, size_t blen,
                     const int *fds, unsigned nfds)
{
    static uint32_t seq;
    struct hdr h = {.op = op, .seq = ++seq, .len = len};
    struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)body, blen}};
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = blen ? 2 : 1};
    union {
        char b[CMSG_SPACE(sizeof(int) * 253)];
        struct cmsghdr align;
    } u;
    if (nfds) {
        m.msg_control = u.b;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    CHECK(sendmsg(s, &m, MSG_NOSIGNAL) >= 0 || errno == EPIPE || errno == ECONNRESET, "sendmsg");
}

static void send_body(int s, uint32_t op, const void *body, size_t blen, const int *fds,
                      unsigned nfds)
{
    raw_send(s, op, (uint32_t)blen, body, blen, fds, nfds);
}

/* The reply's err (>= 0), or -1 if the daemon closed the connection. Waits at
 * most 5 s: a daemon that does not answer is blocked. Closes received fds. */
static int reply_err(int s, void *body, size_t max)
{
    struct pollfd p = {.fd = s, .events = POLLIN};
    CHECK(poll(&p, 1, 5000) == 1, "no reply within 5 s: the daemon is stuck");
    struct hdr h;
    unsigned char buf[1 << 16];
    struct iovec iov[2] = {{&h, sizeof(h)}, {buf, sizeof(buf)}};
    union {
        char b[CMSG_SPACE(sizeof(int) * 253)];
        struct cmsghdr align;
    } u;
    struct msghdr m = {
        .msg_iov = iov, .msg_iovlen = 2, .msg_control = u.b, .msg_controllen = sizeof(u.b)};
    ssize_t n = recvmsg(s, &m, MSG_CMSG_CLOEXEC);
    if (n <= 0)
        return -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (int i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
            close(fd);
        }
    }
    CHECK((size_t)n >= sizeof(h), "short reply");
    if (body)
        memcpy(body, buf, max < (size_t)n - sizeof(h) ? max : (size_t)n - sizeof(h));
    return h.err;
}

static int hello(unsigned dom, uint32_t kind, int evfd)
{
    int s = raw_connect(dom);
    struct hyp_hello h = {HYP_PROTO_VERSION, kind};
    send_body(s, HYP_HELLO, &h, sizeof(h), &evfd, evfd >= 0 ? 1 : 0);
    CHECK(reply_err(s, NULL, 0) == 0, "hello");
    return s;
}

/* The connection is dropped: the daemon refused to go on with it. */
static void expect_dropped(int s, const char *what)
{
    CHECK(reply_err(s, NULL, 0) == -1, "%s: connection not dropped", what);
    close(s);
}

static void expect_err(int s, int err, const char *what)
{
    int e = reply_err(s, NULL, 0);
    CHECK(e == err, "%s: reply err %d, want %d", what, e, err);
}

static int daemon_fds(pid_t pid)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/%d/fd", (int)pid);
    DIR *d = opendir(p);
    CHECK(d, "%s", p);
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static int sealed_memfd(size_t size, int seals)
{
    int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)size) == 0, "memfd");
    if (seals)
        CHECK(fcntl(fd, F_ADD_SEALS, seals) == 0, "seal");
    return fd;
}

static void setdom(unsigned d)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/dom%u/hyp.sock", simdir, d);
    setenv("XENSIM_HYP", p, 1);
}

/* A well-behaved share, map and copy between A and B still work. */
static void still_serves(void)
{
    setdom(A);
    xengntshr_handle *sh = xengntshr_open(NULL, 0);
    CHECK(sh, "gntshr open");
    uint32_t ref;
    uint8_t *p = xengntshr_share_pages(sh, B, 1, &ref, 1);
    CHECK(p, "share");
    p[7] = 0x42;
    setdom(B);
    xengnttab_handle *g = xengnttab_open(NULL, 0);
    CHECK(g, "gnttab open");
    uint8_t *m = xengnttab_map_grant_ref(g, A, ref, PROT_READ);
    CHECK(m && m[7] == 0x42, "map");
    xengnttab_unmap(g, m, 1);
    xengnttab_close(g);
    xengntshr_unshare(sh, p, 1);
    xengntshr_close(sh);
}

int main(int argc, char **argv)
{
    simdir = getenv("XENSIM_DIR");
    if (argc < 4 || !simdir) {
        fprintf(stderr, "usage: XENSIM_DIR=DIR hyp-hostile A B C\n");
        return 2;
    }
    A = (unsigned)strtoul(argv[1], NULL, 10);
    B = (unsigned)strtoul(argv[2], NULL, 10);
    C = (unsigned)strtoul(argv[3], NULL, 10);
    signal(SIGPIPE, SIG_IGN);
    char pidfile[1024];
    snprintf(pidfile, sizeof(pidfile), "%s/xensimd.pid", simdir);
    FILE *pf = fopen(pidfile, "r");
    int dpid = 0;
    CHECK(pf && fscanf(pf, "%d", &dpid) == 1 && dpid > 0, "%s", pidfile);
    fclose(pf);

    /* A grant of A's for B, which C will try to reach. */
    setdom(A);
    xengntshr_handle *sh = xengntshr_open(NULL, 0);
    uint32_t ref;
    uint8_t *secret = sh ? xengntshr_share_pages(sh, B, 1, &ref, 1) : NULL;
    CHECK(secret, "share");
    memcpy(secret, "secret", 6);
    still_serves();
    /* The daemon sees closed handles go asynchronously: settle first. */
    int fds_before = daemon_fds(dpid);
    for (int i = 0, prev = -1; i < 50 && fds_before != prev; i++) {
        usleep(100000);
        prev = fds_before;
        fds_before = daemon_fds(dpid);
    }

    /* Framing. */
    int s = raw_connect(C);
    CHECK(send(s, "xyz", 3, MSG_NOSIGNAL) == 3, "send");
    expect_dropped(s, "3-byte packet");
    s = raw_connect(C);
    raw_send(s, HYP_HELLO, 100, "0123456789", 10, NULL, 0);
    expect_dropped(s, "length past the packet");
    s = raw_connect(C);
    struct hyp_u32 u = {5};
    send_body(s, HYP_GNT_MAP, &u, sizeof(u), NULL, 0);
    expect_dropped(s, "request before hello");
    s = raw_connect(C);
    struct hyp_hello hh = {HYP_PROTO_VERSION + 7, HYP_KIND_GNTTAB};
    send_body(s, HYP_HELLO, &hh, sizeof(hh), NULL, 0);
    expect_err(s, EPROTO, "wrong protocol version");
    close(s);
    s = raw_connect(C);
    hh = (struct hyp_hello){HYP_PROTO_VERSION, 99};
    send_body(s, HYP_HELLO, &hh, sizeof(hh), NULL, 0);
    expect_err(s, EINVAL, "unknown kind");
    close(s);

    /* evtchn hello with a missing or wrong event socket. */
    int pp[2];
    CHECK(pipe(pp) == 0, "pipe");
    int st[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, st) == 0, "socketpair");
    int bad_evfds[] = {-1, pp[0], st[0]};
    for (int i = 0; i < 3; i++) {
        s = raw_connect(C);
        hh = (struct hyp_hello){HYP_PROTO_VERSION, HYP_KIND_EVTCHN};
        send_body(s, HYP_HELLO, &hh, sizeof(hh), &bad_evfds[i], bad_evfds[i] >= 0 ? 1 : 0);
        expect_err(s, EINVAL, "evtchn hello with a bad event socket");
        close(s);
    }
    close(st[0]);
    close(st[1]);

    /* gntshr: shares the daemon must refuse without touching the fd. */
    char fifo[1024];
    snprintf(fifo, sizeof(fifo), "%s/hostile.fifo", simdir);
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
    int ffd = open(fifo, O_RDWR | O_CLOEXEC);
    CHECK(ffd >= 0, "open fifo");
    int unsealed = sealed_memfd(4096, 0);
    int small = sealed_memfd(4096, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    s = hello(C, HYP_KIND_GNTSHR, -1);
    struct hyp_share_req sr = {
        .domid = C, .count = 2, .writable = 1, .notify_offset = HYP_NONE, .notify_port = HYP_NONE};
    int share_fds[] = {ffd, pp[1], unsealed, small};
    const char *share_what[] = {"a FIFO", "a pipe", "an unsealed memfd", "a memfd too small"};
    for (int i = 0; i < 4; i++) {
        send_body(s, HYP_SHR_SHARE, &sr, sizeof(sr), &share_fds[i], 1);
        expect_err(s, EINVAL, share_what[i]);
    }
    send_body(s, HYP_SHR_SHARE, &sr, sizeof(sr), NULL, 0);
    expect_err(s, EINVAL, "share without an fd");
    int good = sealed_memfd(2 * 4096, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    struct hyp_share_req big = sr;
    big.count = 0xFFFFFFF0u;
    send_body(s, HYP_SHR_SHARE, &big, sizeof(big), &good, 1);
    expect_err(s, EINVAL, "share of 4G pages");
    big.count = 0;
    send_body(s, HYP_SHR_SHARE, &big, sizeof(big), &good, 1);
    expect_err(s, EINVAL, "share of 0 pages");
    big = sr;
    big.domid = 0x123456;
    send_body(s, HYP_SHR_SHARE, &big, sizeof(big), &good, 1);
    expect_err(s, EINVAL, "share with a domid past 16 bits");
    big = sr;
    big.count = 1500; /* past gntalloc's default limit of 1024 */
    int huge = sealed_memfd((size_t)1500 * 4096, F_SEAL_SHRINK | F_SEAL_SEAL);
    send_body(s, HYP_SHR_SHARE, &big, sizeof(big), &huge, 1);
    expect_err(s, ENOSPC, "share past the gntalloc limit");
    send_body(s, HYP_SHR_SHARE, &sr, sizeof(sr) - 2, &good, 1);
    expect_err(s, EINVAL, "short share request");
    u.v = 12345;
    send_body(s, HYP_SHR_UNSHARE, &u, sizeof(u), NULL, 0);
    expect_err(s, EINVAL, "unshare of an unknown object");
    send_body(s, HYP_GNT_MAP, &u, sizeof(u), NULL, 0);
    expect_dropped(s, "a gnttab request on a gntshr handle");
    close(ffd);
    close(unsealed);
    close(small);
    close(good);
    close(huge);
    close(pp[0]);
    close(pp[1]);
    unlink(fifo);

    /* gnttab from C: A's grant to B stays out of reach. */
    s = hello(C, HYP_KIND_GNTTAB, -1);
    struct {
        struct hyp_map_req r;
        struct hyp_map_ref refs[2];
    } mr = {{.count = 1, .flags = 0, .notify_offset = HYP_NONE, .notify_port = HYP_NONE},
            {{A, ref}, {A, ref}}};
    send_body(s, HYP_GNT_MAP, &mr, sizeof(mr.r) + sizeof(mr.refs[0]), NULL, 0);
    expect_err(s, EINVAL, "C maps A's grant to B");
    mr.r.flags = HYP_MAP_WRITE;
    send_body(s, HYP_GNT_MAP, &mr, sizeof(mr.r) + sizeof(mr.refs[0]), NULL, 0);
    expect_err(s, EINVAL, "C maps A's grant to B writable");
    struct hyp_obj_req orq = {.domid = A, .ref = ref, .write = 0};
    send_body(s, HYP_GNT_OBJ, &orq, sizeof(orq), NULL, 0);
    expect_err(s, EPERM, "C asks for the object behind A's grant to B");
    mr.r.count = 0;
    send_body(s, HYP_GNT_MAP, &mr, sizeof(mr.r), NULL, 0);
    expect_err(s, EINVAL, "map of 0 refs");
    mr.r.count = 2;
    send_body(s, HYP_GNT_MAP, &mr, sizeof(mr.r) + sizeof(mr.refs[0]), NULL, 0);
    expect_err(s, EINVAL, "count larger than the refs sent");
    mr.r.count = 100000;
    send_body(s, HYP_GNT_MAP, &mr, sizeof(mr), NULL, 0);
    expect_err(s, EINVAL, "huge count");
    u.v = 77;
    send_body(s, HYP_GNT_UNMAP, &u, sizeof(u), NULL, 0);
    expect_err(s, EINVAL, "unmap of an unknown map");
    u.v = 0x7FEF;
    send_body(s, HYP_GNT_GTAB, &u, sizeof(u), NULL, 0);
    expect_err(s, ESRCH, "table of no such domain");
    send_body(s, HYP_GNT_GTAB, &u, 2, NULL, 0);
    expect_err(s, EINVAL, "short request");
    send_body(s, 9999, &u, sizeof(u), NULL, 0);
    expect_dropped(s, "unknown op");
    s = hello(C, HYP_KIND_GNTTAB, -1);
    int many[200];
    for (int i = 0; i < 200; i++)
        many[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    u.v = 4;
    send_body(s, HYP_GNT_SET_MAX, &u, sizeof(u), many, 200);
    expect_dropped(s, "200 fds with a request that takes none");
    for (int i = 0; i < 200; i++)
        close(many[i]);

    /* evtchn: bad ports are ignored or refused. */
    int evp[2];
    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, evp) == 0, "socketpair");
    s = hello(C, HYP_KIND_EVTCHN, evp[1]);
    close(evp[1]);
    uint32_t ports[] = {0, 1, 4095, 4096, 0xFFFFFFFFu};
    for (int i = 0; i < 5; i++) {
        u.v = ports[i];
        send_body(s, HYP_EVT_NOTIFY, &u, sizeof(u), NULL, 0);
        send_body(s, HYP_EVT_UNMASK, &u, sizeof(u), NULL, 0);
    }
    u.v = 0xFFFFFFFFu;
    send_body(s, HYP_EVT_UNBIND, &u, sizeof(u), NULL, 0);
    expect_err(s, EINVAL, "unbind of a huge port");
    u.v = 7;
    send_body(s, HYP_EVT_UNBIND, &u, sizeof(u), NULL, 0);
    expect_err(s, ENOTCONN, "unbind of a port not bound");
    struct hyp_bind_req br = {.remote_dom = A, .remote_port = 0xFFFFFFFFu};
    send_body(s, HYP_EVT_BIND_INTERDOMAIN, &br, sizeof(br), NULL, 0);
    expect_err(s, EINVAL, "bind to a huge remote port");
    send_body(s, HYP_EVT_BIND_INTERDOMAIN, &br, 4, NULL, 0);
    expect_dropped(s, "short bind request");
    close(evp[0]);

    /* A flood of requests whose replies are never read. */
    s = hello(C, HYP_KIND_GNTTAB, -1);
    int fl = fcntl(s, F_GETFL);
    CHECK(fcntl(s, F_SETFL, fl | O_NONBLOCK) == 0, "O_NONBLOCK");
    u.v = 10;
    for (int i = 0; i < 100000; i++) {
        struct hdr h = {.op = HYP_GNT_SET_MAX, .seq = (uint32_t)i, .len = sizeof(u)};
        struct iovec iov[2] = {{&h, sizeof(h)}, {&u, sizeof(u)}};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
        if (sendmsg(s, &m, MSG_NOSIGNAL) < 0) {
            if (errno == EAGAIN) {
                usleep(1000);
                continue;
            }
            break; /* dropped */
        }
    }
    close(s);

    /* More handles than a domain may hold (HYP_CONNS_PER_DOMAIN, 1024): the
     * ones past it are dropped before HELLO is answered; one closed, a new
     * one is served. */
    enum { HANDLES = 1100, HANDLE_LIMIT = 1024 };
    static int hs[HANDLES];
    int nserved = 0, ndropped = 0;
    for (int i = 0; i < HANDLES; i++) {
        hs[i] = raw_connect(C);
        struct hyp_hello hl = {HYP_PROTO_VERSION, HYP_KIND_GNTTAB};
        send_body(hs[i], HYP_HELLO, &hl, sizeof(hl), NULL, 0);
        int e = reply_err(hs[i], NULL, 0);
        if (e == 0) {
            CHECK(!ndropped, "handle %d served after %d were dropped", i, ndropped);
            nserved++;
        } else {
            CHECK(e == -1, "handle %d: HELLO answered %d", i, e);
            ndropped++;
            close(hs[i]);
            hs[i] = -1;
        }
    }
    CHECK(nserved <= HANDLE_LIMIT && nserved >= HANDLE_LIMIT - 8,
          "%d handles served, %d dropped: want at most %d served", nserved, ndropped, HANDLE_LIMIT);
    close(hs[0]);
    hs[0] = -1;
    usleep(100 * 1000);
    s = hello(C, HYP_KIND_GNTTAB, -1); /* a handle again once one is closed */
    close(s);
    for (int i = 0; i < HANDLES; i++)
        if (hs[i] >= 0)
            close(hs[i]);
    printf("handles: %d served, %d dropped\n", nserved, ndropped);

    still_serves();
    /* No fd the daemon received from us is kept. */
    int fds_after = -1;
    for (int i = 0; i < 100 && (fds_after = daemon_fds(dpid)) > fds_before; i++)
        usleep(20000);
    CHECK(fds_after <= fds_before, "daemon fds: %d before, %d after", fds_before, fds_after);
    CHECK(kill(dpid, 0) == 0, "the daemon is alive");
    CHECK(memcmp(secret, "secret", 6) == 0, "A's page is untouched");
    xengntshr_unshare(sh, secret, 1);
    xengntshr_close(sh);
    printf("OK hostile\n");
    return 0;
}
