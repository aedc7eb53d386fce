/* net-jobs - the real-Xen data-path matrix's network jobs (scenario-matrix):
 * a server in dom0, a client in a guest whose NIC is one cell of the matrix.
 *
 *   net-jobs serve PORT
 *   net-jobs client HOST PORT SECONDS
 *
 * The client runs three jobs, SECONDS each, one after the other:
 *   tcp_send   one TCP stream, guest -> dom0 (the server counts and answers
 *              with the byte count it read, which must match what was sent);
 *   tcp_recv   one TCP stream, dom0 -> guest;
 *   udp_rr     UDP request/response, 64 bytes, one outstanding: the round
 *              trip a latency-bound program sees (an answer not back in
 *              200 ms counts as lost and the next request goes out).
 * (iperf3 has no request/response mode; netperf is not in Debian main.)
 * One line a job on stdout:
 *   NX job=tcp_send bytes=N secs=S mib_s=M errors=E
 *   NX job=udp_rr trans=N secs=S trans_s=T p50_us=A p99_us=B lost=L errors=E
 * and "NX done errors=E". Exit 0 only with no error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "job-stats.h"

#define CHUNK       65536
#define RR_LEN      64
#define RR_WAIT_MS  200
#define MAX_SAMPLES (1u << 20)

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int read_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

/* ---- server ---- */

/* A connection's first byte says what it wants: 'S' the client sends until
 * it shuts its side down, and gets the byte count back (8 bytes); 'R' the
 * server sends for the seconds in the next 4 bytes. */
static void *serve_conn(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char cmd = 0;
    static char buf[CHUNK]; /* contents do not matter; shared, never read */
    if (read_all(fd, &cmd, 1) == 0 && cmd == 'S') {
        uint64_t total = 0;
        char *in = malloc(CHUNK);
        ssize_t r;
        while (in && (r = read(fd, in, CHUNK)) > 0)
            total += (uint64_t)r;
        free(in);
        write_all(fd, &total, sizeof(total));
    } else if (cmd == 'R') {
        uint32_t secs;
        if (read_all(fd, &secs, sizeof(secs)) == 0 && secs && secs <= 3600) {
            uint64_t end = js_now_ns() + (uint64_t)secs * 1000000000u;
            while (js_now_ns() < end && write_all(fd, buf, sizeof(buf)) == 0)
                ;
        }
    }
    close(fd);
    return NULL;
}

static void *serve_udp(void *arg)
{
    int u = (int)(intptr_t)arg;
    char b[2048];
    for (;;) {
        struct sockaddr_storage from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(u, b, sizeof(b), 0, (struct sockaddr *)&from, &fl);
        if (n > 0)
            sendto(u, b, (size_t)n, 0, (struct sockaddr *)&from, fl);
    }
    return NULL;
}

static int serve(int port)
{
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int one = 1, s = socket(AF_INET, SOCK_STREAM, 0), u = socket(AF_INET, SOCK_DGRAM, 0);
    if (s < 0 || u < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 16) ||
        bind(u, (struct sockaddr *)&a, sizeof(a))) {
        fprintf(stderr, "net-jobs: serve %d: %s\n", port, strerror(errno));
        return 1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, serve_udp, (void *)(intptr_t)u))
        return 1;
    pthread_detach(t);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        if (pthread_create(&t, NULL, serve_conn, (void *)(intptr_t)c)) {
            close(c);
            continue;
        }
        pthread_detach(t);
    }
}

/* ---- client ---- */

static struct sockaddr_in srv;

static int connect_cmd(char cmd)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {.tv_sec = 30};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&srv, sizeof(srv)) || write_all(fd, &cmd, 1)) {
        close(fd);
        return -1;
    }
    return fd;
}

static void line_tcp(const char *job, uint64_t bytes, double el, int errors, const char *why)
{
    printf("NX job=%s bytes=%llu secs=%.2f mib_s=%.1f errors=%d%s%s\n", job,
           (unsigned long long)bytes, el, el > 0 ? (double)bytes / el / 1048576.0 : 0.0, errors,
           why ? " error=" : "", why ? why : "");
    fflush(stdout);
}

static int tcp_send(unsigned secs)
{
    static char buf[CHUNK];
    memset(buf, 0x5a, sizeof(buf));
    uint64_t t0 = js_now_ns(), end = t0 + (uint64_t)secs * 1000000000u, sent = 0, got = 0;
    int fd = connect_cmd('S');
    const char *why = NULL;
    if (fd < 0)
        why = "connect";
    while (!why && js_now_ns() < end) {
        if (write_all(fd, buf, sizeof(buf)))
            why = "write";
        else
            sent += sizeof(buf);
    }
    if (!why && (shutdown(fd, SHUT_WR) || read_all(fd, &got, sizeof(got))))
        why = "no count back";
    else if (!why && got != sent)
        why = "count differs";
    double el = (double)(js_now_ns() - t0) / 1e9; /* to the server's count: all of it arrived */
    if (fd >= 0)
        close(fd);
    line_tcp("tcp_send", sent, el, why != NULL, why);
    return why != NULL;
}

static int tcp_recv(unsigned secs)
{
    char *buf = malloc(CHUNK);
    uint64_t t0 = js_now_ns(), got = 0;
    int fd = buf ? connect_cmd('R') : -1;
    uint32_t s = secs;
    const char *why = NULL;
    if (fd < 0 || write_all(fd, &s, sizeof(s)))
        why = "connect";
    ssize_t r;
    while (!why && (r = read(fd, buf, CHUNK)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            why = "read";
        else
            got += (uint64_t)r;
    }
    double el = (double)(js_now_ns() - t0) / 1e9;
    if (fd >= 0)
        close(fd);
    free(buf);
    line_tcp("tcp_recv", got, el, why != NULL, why);
    return why != NULL;
}

static int udp_rr(unsigned secs)
{
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    uint32_t *lat = malloc(MAX_SAMPLES * sizeof(uint32_t));
    if (u < 0 || !lat || connect(u, (struct sockaddr *)&srv, sizeof(srv))) {
        printf("NX job=udp_rr trans=0 errors=1 error=socket\n");
        free(lat);
        if (u >= 0)
            close(u);
        return 1;
    }
    uint64_t t0 = js_now_ns(), end = t0 + (uint64_t)secs * 1000000000u, trans = 0, lost = 0,
             seq = 0;
    uint32_t n = 0;
    char b[RR_LEN], r[RR_LEN];
    memset(b, 0, sizeof(b));
    while (js_now_ns() < end) {
        seq++;
        memcpy(b, &seq, sizeof(seq));
        uint64_t s = js_now_ns();
        if (send(u, b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
            lost++;
            usleep(1000);
            continue;
        }
        /* Wait for this request's answer; a late answer to an earlier one is
         * skipped. */
        bool ok = false;
        for (;;) {
            int64_t left = (int64_t)(s + RR_WAIT_MS * 1000000ull - js_now_ns()) / 1000000;
            struct pollfd p = {.fd = u, .events = POLLIN};
            if (left <= 0 || poll(&p, 1, (int)left) <= 0)
                break;
            if (recv(u, r, sizeof(r), 0) == (ssize_t)sizeof(r) && !memcmp(r, &seq, sizeof(seq))) {
                ok = true;
                break;
            }
        }
        if (!ok) {
            lost++;
            continue;
        }
        trans++;
        uint64_t us = (js_now_ns() - s) / 1000u;
        if (n < MAX_SAMPLES)
            lat[n++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
    }
    double el = (double)(js_now_ns() - t0) / 1e9;
    struct js_pct pc = js_percentiles(lat, n);
    free(lat);
    close(u);
    /* A lost datagram is no error of the path (UDP may drop); none answered is. */
    int err = trans == 0;
    printf("NX job=udp_rr trans=%llu secs=%.2f trans_s=%.0f p50_us=%u p99_us=%u lost=%llu "
           "errors=%d\n",
           (unsigned long long)trans, el, el > 0 ? (double)trans / el : 0.0, pc.p50, pc.p99,
           (unsigned long long)lost, err);
    fflush(stdout);
    return err;
}

int main(int argc, char **argv)
{
    char *end;
    if (argc == 3 && !strcmp(argv[1], "serve")) {
        long port = strtol(argv[2], &end, 10);
        if (*end || port < 1 || port > 65535) {
            fprintf(stderr, "net-jobs: PORT must be 1..65535\n");
            return 2;
        }
        return serve((int)port);
    }
    if (argc != 5 || strcmp(argv[1], "client")) {
        fprintf(stderr, "usage: net-jobs serve PORT | net-jobs client HOST PORT SECONDS\n");
        return 2;
    }
    long port = strtol(argv[3], &end, 10);
    if (*end || port < 1 || port > 65535) {
        fprintf(stderr, "net-jobs: PORT must be 1..65535\n");
        return 2;
    }
    unsigned long secs = strtoul(argv[4], &end, 10);
    if (*end || !secs || secs > 3600) {
        fprintf(stderr, "net-jobs: SECONDS must be 1..3600\n");
        return 2;
    }
    srv.sin_family = AF_INET;
    srv.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, argv[2], &srv.sin_addr) != 1) {
        fprintf(stderr, "net-jobs: HOST must be an IPv4 address, not '%s'\n", argv[2]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    printf("NX start server=%s:%ld secs=%lu\n", argv[2], port, secs);
    fflush(stdout);
    int errors = tcp_send((unsigned)secs) + tcp_recv((unsigned)secs) + udp_rr((unsigned)secs);
    printf("NX done errors=%d\n", errors);
    return errors ? 1 : 0;
}
