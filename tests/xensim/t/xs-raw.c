/* xs-raw - speak the xenstore wire protocol byte by byte to the socket in
 * XENSTORED_PATH, for tests of how the store handles malformed and unusual
 * input, pipelining and clients that do not read.
 *
 *   xs-raw CASE      prints "ok CASE" and exits 0, or "FAIL CASE: why", exit 1
 *
 * Cases: oversize nonul badpath unknown-type txid echo pipeline half dirpart
 *        flood guest-priv reset disconnect-tx wait-closed backpressure many-conns
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <xen/io/xs_wire.h>

static const char *case_name;

static void failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", case_name);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    exit(1);
}

static int xconnect(void)
{
    const char *path = getenv("XENSTORED_PATH");
    if (!path)
        failf("XENSTORED_PATH not set");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        failf("connect %s: %s", path, strerror(errno));
    return fd;
}

static void send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t k = send(fd, p, len, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            failf("send: %s", strerror(errno));
        p += k;
        len -= (size_t)k;
    }
}

static void send_msg(int fd, uint32_t type, uint32_t req, uint32_t tx, const void *body, size_t len)
{
    struct xsd_sockmsg h = {.type = type, .req_id = req, .tx_id = tx, .len = (uint32_t)len};
    char buf[sizeof(h) + 8192];
    memcpy(buf, &h, sizeof(h));
    if (len)
        memcpy(buf + sizeof(h), body, len);
    send_all(fd, buf, sizeof(h) + len);
}

/* Read exactly len bytes within ms: 1 done, 0 EOF, -1 timeout. */
static int recv_exact(int fd, void *buf, size_t len, int ms)
{
    char *p = buf;
    while (len) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int r = poll(&pf, 1, ms);
        if (r == 0)
            return -1;
        if (r < 0 && errno == EINTR)
            continue;
        ssize_t k = recv(fd, p, len, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno == ECONNRESET)
            return 0;
        if (k < 0)
            failf("recv: %s", strerror(errno));
        if (k == 0)
            return 0;
        p += k;
        len -= (size_t)k;
    }
    return 1;
}

struct msg {
    struct xsd_sockmsg h;
    char body[XENSTORE_PAYLOAD_MAX + 1];
};

static int recv_msg(int fd, struct msg *m, int ms)
{
    int r = recv_exact(fd, &m->h, sizeof(m->h), ms);
    if (r <= 0)
        return r;
    if (m->h.len > XENSTORE_PAYLOAD_MAX)
        failf("reply of %u bytes", m->h.len);
    r = recv_exact(fd, m->body, m->h.len, ms);
    if (r <= 0)
        failf("truncated reply");
    m->body[m->h.len] = '\0';
    return 1;
}

/* The reply to a request, skipping watch events. */
static void reply(int fd, struct msg *m)
{
    for (;;) {
        int r = recv_msg(fd, m, 5000);
        if (r == 0)
            failf("connection closed while waiting for a reply");
        if (r < 0)
            failf("no reply within 5 s");
        if (m->h.type != XS_WATCH_EVENT)
            return;
    }
}

/* Send a request and check the reply: want is an error name ("EINVAL") or,
 * for success, NULL (any payload of the request's type). */
static void expect(int fd, uint32_t type, uint32_t tx, const void *body, size_t len,
                   const char *want, const char *what)
{
    static uint32_t req = 100;
    struct msg m;
    send_msg(fd, type, ++req, tx, body, len);
    reply(fd, &m);
    if (m.h.req_id != req || m.h.tx_id != tx)
        failf("%s: reply carries req_id %u tx_id %u, sent %u %u", what, m.h.req_id, m.h.tx_id, req,
              tx);
    if (want) {
        if (m.h.type != XS_ERROR || m.h.len != strlen(want) + 1 || strcmp(m.body, want))
            failf("%s: got type %u '%s', want ERROR %s", what, m.h.type, m.body, want);
    } else if (m.h.type != type) {
        failf("%s: got type %u '%s', want success", what, m.h.type, m.body);
    }
}

#define S(lit) lit, sizeof(lit) /* a string literal with its NUL */

static void write_node(int fd, const char *path, const char *val)
{
    char buf[4096];
    size_t pl = strlen(path) + 1, vl = strlen(val);
    memcpy(buf, path, pl);
    memcpy(buf + pl, val, vl);
    expect(fd, XS_WRITE, 0, buf, pl + vl, NULL, path);
}

static bool closed_within(int fd, int ms)
{
    char c;
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    if (poll(&pf, 1, ms) <= 0)
        return false;
    ssize_t k = recv(fd, &c, 1, 0);
    return k == 0 || (k < 0 && errno == ECONNRESET);
}

static void c_oversize(void)
{
    int fd = xconnect();
    write_node(fd, "/raw/oversize", "kept");
    struct xsd_sockmsg h = {.type = XS_WRITE, .req_id = 1, .len = XENSTORE_PAYLOAD_MAX + 1};
    send_all(fd, &h, sizeof(h));
    if (!closed_within(fd, 3000))
        failf("connection not dropped after a %u-byte header", h.len);
    close(fd);
    fd = xconnect();
    expect(fd, XS_READ, 0, S("/raw/oversize"), NULL, "store intact after the drop");
    /* Exactly XENSTORE_PAYLOAD_MAX is allowed. */
    char big[XENSTORE_PAYLOAD_MAX];
    memset(big, 'x', sizeof(big));
    memcpy(big, "/raw/big", 9);
    expect(fd, XS_WRITE, 0, big, sizeof(big), NULL, "payload of exactly 4096 bytes");
    close(fd);
}

static void c_nonul(void)
{
    int fd = xconnect();
    expect(fd, XS_READ, 0, "/tool", 5, "EINVAL", "READ without NUL");
    expect(fd, XS_READ, 0, "", 0, "EINVAL", "READ with empty payload");
    expect(fd, XS_WRITE, 0, "/raw/x", 6, "EINVAL", "WRITE without any NUL");
    expect(fd, XS_MKDIR, 0, S("/raw/a\0/raw/b"), "EINVAL", "MKDIR with two strings");
    expect(fd, XS_RM, 0, "/raw\0junk", 9, "EINVAL", "RM with trailing junk");
    expect(fd, XS_GET_PERMS, 0, "/", 1, "EINVAL", "GET_PERMS without NUL");
    expect(fd, XS_SET_PERMS, 0, S("/raw"), "EINVAL", "SET_PERMS without perms");
    expect(fd, XS_SET_PERMS, 0, S("/raw\0x0"), "EINVAL", "SET_PERMS with a bad perm");
    expect(fd, XS_WATCH, 0, S("/raw"), "EINVAL", "WATCH without token");
    expect(fd, XS_DIRECTORY_PART, 0, S("/raw"), "EINVAL", "DIRECTORY_PART without offset");
    expect(fd, XS_TRANSACTION_END, 0, "T", 1, "EINVAL", "TRANSACTION_END without NUL");
    expect(fd, XS_GET_DOMAIN_PATH, 0, "5", 1, "EINVAL", "GET_DOMAIN_PATH without NUL");
    /* The store still answers. */
    expect(fd, XS_READ, 0, S("/tool"), NULL, "READ after bad requests");
    close(fd);
}

static void c_badpath(void)
{
    int fd = xconnect();
    static const char *const bad[] = {"/raw//x",  "/raw/",    "/raw/a b", "/raw/\xc3\xa4",
                                      "/raw/a.b", "/raw/a:b", "//",       "@x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char buf[64];
        size_t l = strlen(bad[i]) + 1;
        memcpy(buf, bad[i], l);
        expect(fd, XS_WRITE, 0, buf, l + 1, "EINVAL", bad[i]);
        expect(fd, XS_READ, 0, buf, l, "EINVAL", bad[i]);
    }
    expect(fd, XS_READ, 0, S(""), "EINVAL", "empty relative path");
    char longp[XENSTORE_ABS_PATH_MAX + 2];
    memset(longp, 'a', sizeof(longp));
    longp[0] = '/';
    longp[XENSTORE_ABS_PATH_MAX + 1] = '\0'; /* 3073 bytes */
    expect(fd, XS_WRITE, 0, longp, sizeof(longp), "EINVAL", "path of 3073 bytes");
    longp[XENSTORE_ABS_PATH_MAX] = '\0'; /* 3072 bytes */
    expect(fd, XS_WRITE, 0, longp, XENSTORE_ABS_PATH_MAX + 1, NULL, "path of 3072 bytes");
    expect(fd, XS_RM, 0, longp, XENSTORE_ABS_PATH_MAX + 1, NULL, "rm it");
    expect(fd, XS_RM, 0, S("/"), "EINVAL", "RM /");
    expect(fd, XS_RM, 0, S("/raw/no/such"), "ENOENT", "RM below a missing parent");
    close(fd);
}

static void c_unknown_type(void)
{
    int fd = xconnect();
    static const uint32_t types[] = {XS_WATCH_EVENT, XS_ERROR,   XS_SET_TARGET + 1,
                                     XS_TYPE_COUNT,  XS_INVALID, 0xffffffffu};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        char what[32];
        snprintf(what, sizeof(what), "type %u", types[i]);
        expect(fd, types[i], 0, S("/tool"), "ENOSYS", what);
    }
    expect(fd, XS_READ, 0, S("/tool"), NULL, "READ after unknown types");
    close(fd);
}

static uint32_t tx_start(int fd)
{
    struct msg m;
    send_msg(fd, XS_TRANSACTION_START, 1, 0, S(""));
    reply(fd, &m);
    if (m.h.type != XS_TRANSACTION_START)
        failf("TRANSACTION_START: %s", m.body);
    return (uint32_t)strtoul(m.body, NULL, 10);
}

static void c_txid(void)
{
    int fd = xconnect();
    expect(fd, XS_READ, 12345, S("/tool"), "ENOENT", "READ in an unknown transaction");
    expect(fd, XS_WRITE, 777, S("/raw/tx\0v"), "ENOENT", "WRITE in an unknown transaction");
    expect(fd, XS_TRANSACTION_END, 0, S("T"), "ENOENT", "TRANSACTION_END outside one");
    uint32_t t = tx_start(fd);
    if (t == 0)
        failf("transaction id 0");
    expect(fd, XS_TRANSACTION_START, t, S(""), "EBUSY", "TRANSACTION_START inside one");
    expect(fd, XS_TRANSACTION_END, t, S("X"), "EINVAL", "TRANSACTION_END X");
    expect(fd, XS_WATCH, 999, S("/raw\0tok"), NULL, "WATCH ignores tx_id");
    expect(fd, XS_WRITE, t, S("/raw/tx\0v"), NULL, "WRITE in the transaction");
    expect(fd, XS_TRANSACTION_END, t, S("F"), NULL, "abort");
    expect(fd, XS_TRANSACTION_END, t, S("T"), "ENOENT", "END of an ended transaction");
    expect(fd, XS_READ, 0, S("/raw/tx"), "ENOENT", "aborted write not visible");
    close(fd);
}

static void c_echo(void)
{
    int fd = xconnect();
    struct msg m;
    send_msg(fd, XS_WRITE, 0xdeadbeef, 0, "/raw/echo\0v", 11);
    reply(fd, &m);
    if (m.h.type != XS_WRITE || m.h.req_id != 0xdeadbeef || m.h.tx_id != 0 ||
        strcmp(m.body, "OK") || m.h.len != 3)
        failf("WRITE reply: type %u req %x len %u '%s'", m.h.type, m.h.req_id, m.h.len, m.body);
    uint32_t t = tx_start(fd);
    send_msg(fd, XS_READ, 0x1234, t, S("/raw/echo"));
    reply(fd, &m);
    if (m.h.type != XS_READ || m.h.req_id != 0x1234 || m.h.tx_id != t || m.h.len != 1 ||
        m.body[0] != 'v')
        failf("READ reply in transaction: type %u req %x tx %u len %u", m.h.type, m.h.req_id,
              m.h.tx_id, m.h.len);
    /* WATCH: the OK reply first, then the initial event (req_id 0, tx_id 0). */
    send_msg(fd, XS_WATCH, 77, 0, S("/raw/echo\0tk"));
    if (recv_msg(fd, &m, 5000) != 1 || m.h.type != XS_WATCH || m.h.req_id != 77)
        failf("WATCH reply not first");
    if (recv_msg(fd, &m, 5000) != 1 || m.h.type != XS_WATCH_EVENT || m.h.req_id != 0 ||
        m.h.tx_id != 0 || m.h.len != sizeof("/raw/echo\0tk") ||
        memcmp(m.body, "/raw/echo\0tk", m.h.len))
        failf("initial watch event wrong: type %u len %u", m.h.type, m.h.len);
    close(fd);
}

static void c_pipeline(void)
{
    int fd = xconnect();
    enum { N = 300 };
    char buf[N * 32];
    size_t off = 0;
    for (uint32_t i = 0; i < N; i++) {
        /* Relative: the caller's own name, readable by dom0 and guests alike. */
        struct xsd_sockmsg h = {.type = XS_READ, .req_id = i, .len = sizeof("name")};
        memcpy(buf + off, &h, sizeof(h));
        memcpy(buf + off + sizeof(h), "name", sizeof("name"));
        off += sizeof(h) + sizeof("name");
    }
    send_all(fd, buf, off); /* the store pauses reading, not the connection */
    for (uint32_t i = 0; i < N; i++) {
        struct msg m;
        reply(fd, &m);
        if (m.h.type != XS_READ || m.h.req_id != i)
            failf("reply %u out of order: type %u req %u", i, m.h.type, m.h.req_id);
    }
    close(fd);
}

static void c_half(void)
{
    int fd = xconnect();
    write_node(fd, "/raw/half", "before");
    /* A WRITE whose payload never completes, then the client goes. */
    struct xsd_sockmsg h = {.type = XS_WRITE, .req_id = 9, .len = 64};
    send_all(fd, &h, sizeof(h));
    send_all(fd, "/raw/half\0after", 15);
    close(fd);
    fd = xconnect();
    /* Half a header, then gone. */
    send_all(fd, &h, 7);
    close(fd);
    fd = xconnect();
    struct msg m;
    send_msg(fd, XS_READ, 1, 0, S("/raw/half"));
    reply(fd, &m);
    if (m.h.type != XS_READ || strcmp(m.body, "before"))
        failf("store changed by a half-sent message: '%s'", m.body);
    close(fd);
}

static void c_dirpart(void)
{
    int fd = xconnect();
    enum { N = 400 };
    for (int i = 0; i < N; i++) {
        char p[64];
        snprintf(p, sizeof(p), "/raw/dir/child-with-a-long-name-%04d", i);
        write_node(fd, p, "");
    }
    expect(fd, XS_DIRECTORY, 0, S("/raw/dir"), "E2BIG", "DIRECTORY over 4096 bytes");
    unsigned off = 0, seen = 0;
    char gen0[32] = "";
    for (int round = 0; round < 100; round++) {
        char req[64];
        int l = snprintf(req, sizeof(req), "/raw/dir%c%u", 0, off);
        struct msg m;
        send_msg(fd, XS_DIRECTORY_PART, 5, 0, req, (size_t)l + 1);
        reply(fd, &m);
        if (m.h.type != XS_DIRECTORY_PART)
            failf("DIRECTORY_PART: %s", m.body);
        size_t glen = strlen(m.body) + 1;
        if (!gen0[0])
            snprintf(gen0, sizeof(gen0), "%.30s", m.body);
        else if (strcmp(gen0, m.body))
            failf("generation changed between reads: %s %s", gen0, m.body);
        size_t p = glen;
        bool end = false;
        while (p < m.h.len) {
            size_t cl = strlen(m.body + p);
            if (cl == 0) {
                end = true;
                break;
            }
            char want[64];
            snprintf(want, sizeof(want), "child-with-a-long-name-%04u", seen);
            if (strcmp(m.body + p, want))
                failf("child %u is '%s'", seen, m.body + p);
            seen++;
            p += cl + 1;
            off += (unsigned)cl + 1;
        }
        if (end)
            break;
    }
    if (seen != N)
        failf("DIRECTORY_PART listed %u of %u children", seen, N);
    /* Past the end: the generation and an empty list. */
    char req[64];
    int l = snprintf(req, sizeof(req), "/raw/dir%c%u", 0, off + 1000);
    struct msg m;
    send_msg(fd, XS_DIRECTORY_PART, 6, 0, req, (size_t)l + 1);
    reply(fd, &m);
    if (m.h.type != XS_DIRECTORY_PART || m.h.len != strlen(gen0) + 2 || m.body[m.h.len - 1])
        failf("DIRECTORY_PART past the end: len %u", m.h.len);
    expect(fd, XS_RM, 0, S("/raw/dir"), NULL, "rm");
    close(fd);
}

/* A client that never reads must not block others, nor make the store keep
 * every event for it: events past the bound are dropped, the connection stays. */
static void c_flood(void)
{
    enum { N = 150000 };
    int a = xconnect(), b = xconnect();
    expect(a, XS_WATCH, 0, S("/flood\0f"), NULL, "watch");
    struct msg m;
    if (recv_msg(a, &m, 5000) != 1 || m.h.type != XS_WATCH_EVENT)
        failf("no initial event");
    /* b writes N distinct nodes, pipelined 16 at a time. */
    int inflight = 0;
    for (int i = 0; i < N; i++) {
        char body[64];
        int l = snprintf(body, sizeof(body), "/flood/%d/%d", i / 256, i % 256);
        send_msg(b, XS_WRITE, (uint32_t)i, 0, body, (size_t)l + 1);
        if (++inflight == 16) {
            for (; inflight; inflight--) {
                reply(b, &m);
                if (m.h.type != XS_WRITE)
                    failf("write %d: %s", i, m.body);
            }
        }
    }
    for (; inflight; inflight--)
        reply(b, &m);
    /* b is still served promptly. */
    expect(b, XS_READ, 0, S("/tool"), NULL, "read while a peer does not read");
    /* Now a reads what it was kept: some events, not all of them. */
    unsigned events = 0;
    while (recv_msg(a, &m, 1000) == 1)
        if (m.h.type == XS_WATCH_EVENT)
            events++;
    if (events == 0 || events >= N)
        failf("non-reading watcher got %u of %u events: no bound", events, N);
    expect(a, XS_READ, 0, S("/tool"), NULL, "the non-reading connection still works");
    printf("# flood: watcher kept %u of %d events\n", events, N);
    expect(b, XS_RM, 0, S("/flood"), NULL, "rm");
    close(a);
    close(b);
}

/* Run as an unprivileged domain. */
static void c_guest_priv(void)
{
    int fd = xconnect();
    expect(fd, XS_INTRODUCE, 0, S("9\0001\0001"), "EACCES", "INTRODUCE");
    expect(fd, XS_RELEASE, 0, S("9"), "EACCES", "RELEASE");
    expect(fd, XS_RESUME, 0, S("9"), "EACCES", "RESUME");
    expect(fd, XS_SET_TARGET, 0, S("9\0000"), "EACCES", "SET_TARGET");
    expect(fd, XS_IS_DOMAIN_INTRODUCED, 0, S("0"), "EACCES", "IS_DOMAIN_INTRODUCED");
    expect(fd, XS_CONTROL, 0, S("print\0hi"), "EACCES", "CONTROL");
    expect(fd, XS_GET_DOMAIN_PATH, 0, S("3"), NULL, "GET_DOMAIN_PATH");
    close(fd);
}

/* RESET_WATCHES drops the connection's watches and transactions. */
static void c_reset(void)
{
    int fd = xconnect();
    expect(fd, XS_WATCH, 0, S("/raw/reset\0tok"), NULL, "watch");
    uint32_t t = tx_start(fd);
    expect(fd, XS_WRITE, t, "/raw/reset/in-tx\0v", 18, NULL, "write in the transaction");
    expect(fd, XS_RESET_WATCHES, 0, S(""), NULL, "RESET_WATCHES");
    expect(fd, XS_READ, t, S("/raw/reset"), "ENOENT", "the transaction is gone");
    expect(fd, XS_UNWATCH, 0, S("/raw/reset\0tok"), "ENOENT", "the watch is gone");
    /* No event may follow for the dropped watch (the initial one came before). */
    struct msg m;
    while (recv_msg(fd, &m, 200) == 1)
        if (m.h.type != XS_WATCH_EVENT)
            failf("unexpected message type %u", m.h.type);
    write_node(fd, "/raw/reset/x", "1");
    if (recv_msg(fd, &m, 300) == 1)
        failf("event after RESET_WATCHES: type %u %s", m.h.type, m.body);
    expect(fd, XS_READ, 0, S("/raw/reset/in-tx"), "ENOENT", "nothing committed");
    close(fd);
}

/* A client that goes away inside a transaction commits nothing, and a
 * transaction id does not leak into another connection. */
static void c_disconnect_tx(void)
{
    int a = xconnect();
    uint32_t t = tx_start(a);
    expect(a, XS_WRITE, t, "/raw/disc/x\0v", 13, NULL, "write in the transaction");
    expect(a, XS_RM, t, S("/tool"), NULL, "rm in the transaction");
    close(a);
    int b = xconnect();
    expect(b, XS_READ, t, S("/tool"), "ENOENT", "the transaction id on another connection");
    expect(b, XS_READ, 0, S("/raw/disc/x"), "ENOENT", "nothing committed");
    expect(b, XS_READ, 0, S("/tool"), NULL, "the rm was not committed");
    close(b);
}

/* Connect, check the connection works, then wait (up to 60 s) for the
 * store to close it. */
static void c_wait_closed(void)
{
    int fd = xconnect();
    expect(fd, XS_READ, 0, S("name"), NULL, "read");
    printf("connected\n");
    if (!closed_within(fd, 60000))
        failf("connection not closed");
    printf("closed\n");
    close(fd);
}

/* A client that sends requests without reading replies is stopped (the
 * store stops reading it) instead of having every reply queued; once it
 * reads, every request is answered, in order. */
static void c_backpressure(void)
{
    enum { N = 200000, REQ = sizeof(struct xsd_sockmsg) + sizeof("name") };
    int fd = xconnect();
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    static char out[N * REQ];
    for (uint32_t i = 0; i < N; i++) {
        struct xsd_sockmsg h = {.type = XS_READ, .req_id = i, .len = sizeof("name")};
        memcpy(out + i * REQ, &h, sizeof(h));
        memcpy(out + i * REQ + sizeof(h), "name", sizeof("name"));
    }
    size_t sent = 0;
    bool stalled = false;
    while (sent < sizeof(out)) {
        ssize_t k = send(fd, out + sent, sizeof(out) - sent > 65536 ? 65536 : sizeof(out) - sent,
                         MSG_NOSIGNAL);
        if (k > 0) {
            sent += (size_t)k;
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EINTR)
            failf("send: %s", strerror(errno));
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        if (poll(&pf, 1, 1000) == 0) {
            stalled = true;
            break;
        }
    }
    if (!stalled)
        failf("all %d requests were taken while no reply was read", N);
    printf("# backpressure: stalled after %zu of %d requests\n", sent / REQ, N);
    /* Now read replies, sending the rest as room appears. */
    static char in[1 << 16];
    size_t have = 0;
    uint32_t next = 0;
    while (next < N) {
        struct pollfd pf = {.fd = fd, .events = POLLIN | (sent < sizeof(out) ? POLLOUT : 0)};
        if (poll(&pf, 1, 5000) <= 0)
            failf("stuck at reply %u", next);
        if (pf.revents & POLLOUT) {
            ssize_t k = send(fd, out + sent, sizeof(out) - sent, MSG_NOSIGNAL);
            if (k > 0)
                sent += (size_t)k;
        }
        if (!(pf.revents & POLLIN))
            continue;
        ssize_t k = recv(fd, in + have, sizeof(in) - have, 0);
        if (k <= 0) {
            if (k < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            failf("connection lost at reply %u", next);
        }
        have += (size_t)k;
        size_t off = 0;
        while (have - off >= sizeof(struct xsd_sockmsg)) {
            struct xsd_sockmsg h;
            memcpy(&h, in + off, sizeof(h));
            if (have - off < sizeof(h) + h.len)
                break;
            if (h.type != XS_READ || h.req_id != next)
                failf("reply %u: type %u req %u", next, h.type, h.req_id);
            next++;
            off += sizeof(h) + h.len;
        }
        memmove(in, in + off, have - off);
        have -= off;
    }
    close(fd);
}

/* An unprivileged domain holds at most 256 connections (XS_CONNS_PER_DOMAIN):
 * of 300 opened, the store answers on at most 256 and closes the others; one
 * closed, a new one is served again. Run in a guest domain. */
static void c_many_conns(void)
{
    enum { N = 300, LIMIT = 256 };
    static int fd[N];
    unsigned served = 0, refused = 0;
    int last_served = -1;
    for (int i = 0; i < N; i++) {
        fd[i] = xconnect();
        /* A refused connection may be closed before the request goes out. */
        struct {
            struct xsd_sockmsg h;
            char b[sizeof("name")];
        } q = {{.type = XS_READ, .req_id = (uint32_t)i, .len = sizeof("name")}, "name"};
        struct msg m;
        int r = 0;
        if (send(fd[i], &q, sizeof(q), MSG_NOSIGNAL) == (ssize_t)sizeof(q))
            r = recv_msg(fd[i], &m, 5000);
        else if (errno != EPIPE && errno != ECONNRESET)
            failf("connection %d: send: %s", i, strerror(errno));
        if (r < 0)
            failf("connection %d: neither answered nor closed within 5 s", i);
        if (r == 0) {
            refused++;
        } else {
            if (m.h.type != XS_READ || m.h.req_id != (uint32_t)i)
                failf("connection %d: reply type %u req %u", i, m.h.type, m.h.req_id);
            if (refused)
                failf("connection %d served after %u were refused", i, refused);
            served++;
            last_served = i;
        }
    }
    if (served > LIMIT || served < LIMIT - 8 || refused != N - served)
        failf("%u connections served, %u refused: want at most %d served (fewer only by the "
              "domain's own), the rest refused",
              served, refused, LIMIT);
    close(fd[last_served]);
    usleep(100 * 1000); /* the store notices the close */
    int again = xconnect();
    expect(again, XS_READ, 0, S("name"), NULL, "read on a connection after one was closed");
    close(again);
    for (int i = 0; i < N; i++)
        if (i != last_served)
            close(fd[i]);
    printf("served %u of %d, refused %u\n", served, N, refused);
}

static const struct {
    const char *name;
    void (*fn)(void);
} cases[] = {
    {"many-conns", c_many_conns},
    {"backpressure", c_backpressure},
    {"wait-closed", c_wait_closed},
    {"reset", c_reset},
    {"disconnect-tx", c_disconnect_tx},
    {"oversize", c_oversize},
    {"nonul", c_nonul},
    {"badpath", c_badpath},
    {"unknown-type", c_unknown_type},
    {"txid", c_txid},
    {"echo", c_echo},
    {"pipeline", c_pipeline},
    {"half", c_half},
    {"dirpart", c_dirpart},
    {"flood", c_flood},
    {"guest-priv", c_guest_priv},
};

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: xs-raw CASE\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (strcmp(argv[1], cases[i].name) == 0) {
            case_name = cases[i].name;
            cases[i].fn();
            printf("ok %s\n", case_name);
            return 0;
        }
    }
    fprintf(stderr, "xs-raw: unknown case %s\n", argv[1]);
    return 2;
}
