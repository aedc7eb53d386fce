/* netprobe - UDP probes for the network tests and benchmark.
 *
 *   netprobe server PORT [SECONDS]       echo every datagram back, for SECONDS (3600)
 *   netprobe client HOST PORT INTERVAL_US SECONDS
 *                                        send a numbered, timestamped datagram every
 *                                        INTERVAL_US for SECONDS; print one line per
 *                                        echo received: "<sent_ns> <recv_ns> <number>"
 *                                        (CLOCK_REALTIME; number from 0: the missing ones
 *                                        were lost), then "PROBE-DONE <sent> <echoed>"
 *
 * Request/response latency is recv - sent; a recovery's duration is seen as the
 * first echo of a datagram sent after the fault. Bounded by SECONDS (client).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int parse(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

static int server(unsigned port, unsigned long secs)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        perror("netprobe: bind");
        return 1;
    }
    uint64_t end = now_ns(CLOCK_MONOTONIC) + secs * 1000000000ull;
    while (now_ns(CLOCK_MONOTONIC) < end) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 1000) <= 0)
            continue;
        char buf[2048];
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
        if (n > 0)
            sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
    }
    return 0;
}

static int client(const char *host, unsigned port, unsigned long interval_us, unsigned long secs)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        perror("netprobe: connect");
        return 1;
    }
    /* A line per echo as it comes: the caller may stop us at any time (and an
     * ASan build cannot run under stdbuf's preload). */
    setvbuf(stdout, NULL, _IOLBF, 0);
    uint64_t end = now_ns(CLOCK_MONOTONIC) + secs * 1000000000ull, next = 0, sent = 0, got = 0;
    while (now_ns(CLOCK_MONOTONIC) < end) {
        uint64_t m = now_ns(CLOCK_MONOTONIC);
        if (m >= next) {
            uint64_t msg[2] = {sent, now_ns(CLOCK_REALTIME)};
            if (send(fd, msg, sizeof(msg), 0) == (ssize_t)sizeof(msg))
                sent++;
            next = m + interval_us * 1000u;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int wait_ms = (int)((next > m ? next - m : 0) / 1000000u);
        if (poll(&p, 1, wait_ms) <= 0)
            continue;
        uint64_t msg[2];
        while (recv(fd, msg, sizeof(msg), 0) == (ssize_t)sizeof(msg)) {
            got++;
            printf("%llu %llu %llu\n", (unsigned long long)msg[1],
                   (unsigned long long)now_ns(CLOCK_REALTIME), (unsigned long long)msg[0]);
        }
    }
    printf("PROBE-DONE %llu %llu\n", (unsigned long long)sent, (unsigned long long)got);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long port, iv, secs;
    secs = 3600;
    if ((argc == 3 || argc == 4) && !strcmp(argv[1], "server") &&
        parse(argv[2], 65535, &port) == 0 && (argc == 3 || parse(argv[3], 86400, &secs) == 0))
        return server((unsigned)port, secs);
    if (argc == 6 && !strcmp(argv[1], "client") && parse(argv[3], 65535, &port) == 0 &&
        parse(argv[4], 10000000, &iv) == 0 && iv > 0 && parse(argv[5], 3600, &secs) == 0)
        return client(argv[2], (unsigned)port, iv, secs);
    fprintf(
        stderr,
        "usage: netprobe server PORT [SECONDS] | netprobe client HOST PORT INTERVAL_US SECONDS\n");
    return 2;
}
