/* net-verify - the full-system tier's network workload. A server in dom0
 * and a client in a guest whose NIC is served by a driver domain:
 *
 *   net-verify serve PORT
 *   net-verify client HOST PORT MIB INTERVAL_MS
 *
 * The client runs two things at once over TCP until SIGTERM: transfers of MIB
 * MiB each, one after the other, whose every byte it checks (the server sends
 * a stream that is a function of a per-transfer seed), and an interactive
 * session on one long-lived connection (a short line every INTERVAL_MS,
 * echoed back and compared). A short read, a wrong byte, a reset or a closed
 * connection is an error; the longest time without a byte arriving is the
 * pause the application saw (a recovery shows up there).
 *
 * Client lines on stdout: "WL start ...", "WL progress ..." every 2 s,
 * "WL stall ..." when a pause over 0.5 s ends, "WL ERROR ..." for each error,
 * and on SIGTERM "WL DONE errors=N ...". Exit 0 only with no error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 65536
#define LINE  64
/* Pauses over this are reported: above the tier's usual jitter, below the
 * 1 s a hot standby's recovery is to stay under. */
#define STALL_MS 500

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* Word k of the stream for seed s: a stateless mix of (s, k), so either side
 * can produce or check any piece of the stream. */
static uint64_t stream_word(uint64_t s, uint64_t k)
{
    uint64_t z = s * 0x9E3779B97F4A7C15ull + k * 0xBF58476D1CE4E5B9ull + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Bytes [off, off + n) of the stream for seed s (little-endian words). */
static void stream_fill(uint64_t s, uint64_t off, uint8_t *buf, size_t n)
{
    uint64_t k = UINT64_MAX, w = 0;
    for (size_t j = 0; j < n; j++) {
        uint64_t i = off + j;
        if (i / 8 != k) {
            k = i / 8;
            w = stream_word(s, k);
        }
        buf[j] = (uint8_t)(w >> (8 * (i % 8)));
    }
}

static bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* ---- server ---- */

/* One connection: "DATA <seed> <bytes>\n" gets that stream; "ECHO\n" gets
 * every later byte back. */
static void serve_one(int c)
{
    char req[LINE];
    size_t n = 0;
    while (n < sizeof(req) - 1) {
        ssize_t r = read(c, req + n, 1);
        if (r <= 0)
            return;
        if (req[n] == '\n')
            break;
        n++;
    }
    req[n] = 0;
    unsigned long long seed, len;
    static uint8_t buf[CHUNK];
    if (sscanf(req, "DATA %llu %llu", &seed, &len) == 2) {
        for (uint64_t off = 0; off < len;) {
            size_t k = len - off < CHUNK ? (size_t)(len - off) : CHUNK;
            stream_fill(seed, off, buf, k);
            if (!write_all(c, buf, k))
                return;
            off += k;
        }
        /* Stay until the client has it all and closes: a socket closed with
         * data still in flight is an orphan, and the kernel gives an orphan
         * far fewer retransmissions (tcp_orphan_retries) than a live one, so
         * a 30 s outage would end in a reset, a server-side artefact. */
        shutdown(c, SHUT_WR);
        struct timeval tv = {.tv_sec = 900};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        while (read(c, buf, sizeof(buf)) > 0)
            ;
    } else if (!strcmp(req, "ECHO")) {
        ssize_t r;
        while ((r = read(c, buf, sizeof(buf))) > 0)
            if (!write_all(c, buf, (size_t)r))
                return;
    } else {
        fprintf(stderr, "net-verify: bad request '%s'\n", req);
    }
}

static int serve(uint16_t port)
{
    signal(SIGCHLD, SIG_IGN); /* children reap themselves */
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 16) < 0) {
        fprintf(stderr, "net-verify: listen on port %u: %s\n", port, strerror(errno));
        return 1;
    }
    fprintf(stderr, "net-verify: serving on port %u\n", port);
    while (!stop) {
        int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno != EINTR)
                fprintf(stderr, "net-verify: accept: %s\n", strerror(errno));
            continue;
        }
        pid_t p = fork();
        if (p == 0) {
            close(s);
            serve_one(c);
            _exit(0);
        }
        if (p < 0)
            fprintf(stderr, "net-verify: fork: %s\n", strerror(errno));
        close(c);
    }
    return 0;
}

/* ---- client ---- */

struct client {
    struct sockaddr_in srv;
    uint64_t mib, interval_ms;
    uint64_t errors, transfers, bytes, echoes, max_gap_ms, max_rtt_ms;
    /* the transfer in progress */
    int dfd;
    bool dfailed; /* the last transfer failed: wait a second before the next */
    uint64_t seed, off, last_byte_ms, started_ms;
    /* the interactive session */
    int efd;
    uint64_t echo_seq, echo_sent_ms, next_echo_ms;
    char expect[LINE], got[LINE];
    size_t expect_len, got_len;
    bool echo_waiting;
};

static void error(struct client *c, const char *what, const char *detail)
{
    c->errors++;
    printf("WL ERROR %s: %s\n", what, detail);
}

/* A blocking connect (the kernel's SYN retries bound it) and the request. */
static int dial(struct client *c, const char *req)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&c->srv, sizeof(c->srv)) < 0 ||
        !write_all(fd, req, strlen(req))) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* A pause that ends now. end_rt (the wall clock, which a Xen guest takes
 * from Xen at its boot) places it on dom0's timeline of a recovery - to
 * within the two domains' offset (bench/README.md, "The crash's path,
 * placed": 0.6 s between domains booted at different times). */
static void gap(struct client *c, uint64_t ms, const char *op)
{
    if (ms > c->max_gap_ms)
        c->max_gap_ms = ms;
    if (ms > STALL_MS) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        printf("WL stall ms=%llu op=%s end_rt=%llu\n", (unsigned long long)ms, op,
               (unsigned long long)t.tv_sec * 1000u + (unsigned long long)t.tv_nsec / 1000000u);
    }
}

static void data_start(struct client *c)
{
    char req[LINE];
    if (c->dfailed) {
        sleep(1);
        c->dfailed = false;
    }
    c->seed++;
    snprintf(req, sizeof(req), "DATA %llu %llu\n", (unsigned long long)c->seed,
             (unsigned long long)(c->mib << 20));
    c->dfd = dial(c, req);
    if (c->dfd < 0 && stop)
        return; /* SIGTERM cut the connect short: the end, not an error */
    if (c->dfd < 0) {
        error(c, "transfer connect", strerror(errno));
        sleep(1);
        return;
    }
    c->off = 0;
    c->started_ms = c->last_byte_ms = now_ms();
}

static void data_read(struct client *c)
{
    static uint8_t buf[CHUNK];
    ssize_t n = read(c->dfd, buf, sizeof(buf));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    uint64_t total = c->mib << 20;
    if (n <= 0) {
        char d[96];
        snprintf(d, sizeof(d), "%s after %llu of %llu bytes", n < 0 ? strerror(errno) : "EOF",
                 (unsigned long long)c->off, (unsigned long long)total);
        error(c, "transfer", d);
        close(c->dfd);
        c->dfd = -1;
        c->dfailed = true;
        return;
    }
    uint64_t t = now_ms();
    gap(c, t - c->last_byte_ms, "read");
    c->last_byte_ms = t;
    static uint8_t want[CHUNK];
    stream_fill(c->seed, c->off, want, (size_t)n);
    if (c->off + (uint64_t)n > total || memcmp(buf, want, (size_t)n)) {
        size_t j = 0;
        while (j < (size_t)n && c->off + j < total && buf[j] == want[j])
            j++;
        char d[96];
        snprintf(d, sizeof(d), "transfer %llu: wrong byte at offset %llu",
                 (unsigned long long)c->seed, (unsigned long long)(c->off + j));
        error(c, "verify", d);
        close(c->dfd);
        c->dfd = -1;
        c->dfailed = true;
        return;
    }
    c->off += (uint64_t)n;
    c->bytes += (uint64_t)n;
    if (c->off == total) {
        c->transfers++;
        close(c->dfd);
        c->dfd = -1;
    }
}

static void echo_send(struct client *c)
{
    c->echo_seq++;
    int k = snprintf(c->expect, sizeof(c->expect), "ping %llu\n", (unsigned long long)c->echo_seq);
    c->expect_len = (size_t)k;
    c->got_len = 0;
    if (!write_all(c->efd, c->expect, c->expect_len) && errno != EAGAIN) {
        error(c, "session write", strerror(errno));
        close(c->efd);
        c->efd = -1;
        return;
    }
    c->echo_sent_ms = now_ms();
    c->echo_waiting = true;
}

static void echo_read(struct client *c)
{
    ssize_t n = read(c->efd, c->got + c->got_len, c->expect_len - c->got_len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        error(c, "session", n < 0 ? strerror(errno) : "closed by the peer");
        close(c->efd);
        c->efd = -1;
        return;
    }
    c->got_len += (size_t)n;
    if (c->got_len < c->expect_len)
        return;
    if (memcmp(c->got, c->expect, c->expect_len)) {
        error(c, "session", "the echo differs from what was sent");
        close(c->efd);
        c->efd = -1;
        return;
    }
    uint64_t rtt = now_ms() - c->echo_sent_ms;
    if (rtt > c->max_rtt_ms)
        c->max_rtt_ms = rtt;
    gap(c, rtt, "echo");
    c->echoes++;
    c->echo_waiting = false;
    c->next_echo_ms = c->echo_sent_ms + c->interval_ms;
}

static int client(struct client *c)
{
    printf("WL start server=%s:%u transfer_mib=%llu session_interval_ms=%llu\n",
           inet_ntoa(c->srv.sin_addr), ntohs(c->srv.sin_port), (unsigned long long)c->mib,
           (unsigned long long)c->interval_ms);
    fflush(stdout);
    c->efd = dial(c, "ECHO\n");
    if (c->efd < 0)
        error(c, "session connect", strerror(errno));
    c->dfd = -1;
    uint64_t t0 = now_ms(), next_report = t0 + 2000;
    while (!stop) {
        if (c->dfd < 0)
            data_start(c);
        uint64_t t = now_ms();
        if (c->efd >= 0 && !c->echo_waiting && t >= c->next_echo_ms)
            echo_send(c);
        struct pollfd p[2] = {{.fd = c->dfd, .events = POLLIN}, {.fd = c->efd, .events = POLLIN}};
        int r = poll(p, 2, (int)(c->interval_ms < 1000 ? c->interval_ms : 1000));
        if (r < 0 && errno != EINTR) {
            error(c, "poll", strerror(errno));
            break;
        }
        if (c->dfd >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
            data_read(c);
        if (c->efd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
            echo_read(c);
        t = now_ms();
        if (t >= next_report) {
            printf("WL progress transfers=%llu MiB=%llu MiB/s=%.2f echoes=%llu errors=%llu\n",
                   (unsigned long long)c->transfers, (unsigned long long)(c->bytes >> 20),
                   (double)c->bytes / 1048576.0 / ((double)(t - t0) / 1000.0),
                   (unsigned long long)c->echoes, (unsigned long long)c->errors);
            fflush(stdout);
            next_report = t + 2000;
        }
    }
    /* A transfer cut short by SIGTERM is not an error; a pause still counts. */
    if (c->dfd >= 0)
        gap(c, now_ms() - c->last_byte_ms, "read");
    if (c->efd < 0)
        error(c, "session", "not connected at the end");
    printf("WL DONE errors=%llu transfers=%llu MiB=%llu echoes=%llu max_gap_ms=%llu "
           "max_echo_ms=%llu\n",
           (unsigned long long)c->errors, (unsigned long long)c->transfers,
           (unsigned long long)(c->bytes >> 20), (unsigned long long)c->echoes,
           (unsigned long long)c->max_gap_ms, (unsigned long long)c->max_rtt_ms);
    fflush(stdout);
    return c->errors ? 1 : 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: net-verify serve PORT\n"
                    "       net-verify client HOST PORT MIB INTERVAL_MS\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    uint64_t port;
    if (argc == 3 && !strcmp(argv[1], "serve") && parse_u64(argv[2], 1, 65535, &port))
        return serve((uint16_t)port);
    struct client c = {.srv = {.sin_family = AF_INET}, .dfd = -1, .efd = -1};
    if (argc != 6 || strcmp(argv[1], "client") ||
        inet_pton(AF_INET, argv[2], &c.srv.sin_addr) != 1 || !parse_u64(argv[3], 1, 65535, &port) ||
        !parse_u64(argv[4], 1, 4096, &c.mib) || !parse_u64(argv[5], 1, 60000, &c.interval_ms))
        usage();
    c.srv.sin_port = htons((uint16_t)port);
    return client(&c);
}
