/* ringbench - a ring over xensim grants and event channels (Debian's
 * libxenvchan) against a plain pipe between the same two processes.
 *
 *   ringbench server FIFODIR      in one domain
 *   ringbench client FIFODIR      in another; prints JSON result lines
 *
 * Peers find each other through their own data/peer key (written by dom0).
 * FIFODIR holds two FIFOs, c2s and s2c, made by the caller. Each transport
 * runs the same two phases: RTT_ROUNDS round trips of 64 bytes, then
 * STREAM_BYTES streamed in 64 KiB writes and acknowledged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libxenvchan.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#define RTT_ROUNDS   20000
#define MSG          64
#define CHUNK        65536
#define STREAM_BYTES (256ul << 20)
#define RING_BYTES   65536

struct chan {
    struct libxenvchan *v; /* vchan, or: */
    int rfd, wfd;          /* a pipe pair */
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int full_io(struct chan *c, void *buf, size_t len, int writing)
{
    if (c->v) {
        int r = writing ? libxenvchan_send(c->v, buf, len) : libxenvchan_recv(c->v, buf, len);
        return r == (int)len ? 0 : -1;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t n = writing ? write(c->wfd, (char *)buf + done, len - done)
                            : read(c->rfd, (char *)buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

/* vchan packets are bounded by the ring: stream CHUNK as ring-sized pieces. */
static int stream_io(struct chan *c, char *buf, size_t len, int writing)
{
    size_t piece = c->v ? RING_BYTES / 2 : len;
    for (size_t off = 0; off < len; off += piece) {
        size_t n = len - off < piece ? len - off : piece;
        if (full_io(c, buf + off, n, writing) < 0)
            return -1;
    }
    return 0;
}

static int serve(struct chan *c)
{
    static char buf[CHUNK];
    for (int i = 0; i < RTT_ROUNDS; i++)
        if (full_io(c, buf, MSG, 0) < 0 || full_io(c, buf, MSG, 1) < 0)
            return -1;
    for (unsigned long got = 0; got < STREAM_BYTES; got += CHUNK)
        if (stream_io(c, buf, CHUNK, 0) < 0)
            return -1;
    return full_io(c, buf, 8, 1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct result {
    double p50_us, p99_us, mibs;
};

static int measure(struct chan *c, struct result *r)
{
    static char buf[CHUNK];
    static double rtt[RTT_ROUNDS];
    memset(buf, 0xa5, sizeof(buf));
    for (int i = 0; i < RTT_ROUNDS; i++) {
        double t = now();
        if (full_io(c, buf, MSG, 1) < 0 || full_io(c, buf, MSG, 0) < 0)
            return -1;
        rtt[i] = (now() - t) * 1e6;
    }
    qsort(rtt, RTT_ROUNDS, sizeof(rtt[0]), cmp_double);
    r->p50_us = rtt[RTT_ROUNDS / 2];
    r->p99_us = rtt[RTT_ROUNDS * 99 / 100];
    double t0 = now();
    for (unsigned long sent = 0; sent < STREAM_BYTES; sent += CHUNK)
        if (stream_io(c, buf, CHUNK, 1) < 0)
            return -1;
    if (full_io(c, buf, 8, 0) < 0)
        return -1;
    r->mibs = (double)(STREAM_BYTES >> 20) / (now() - t0);
    return 0;
}

static int read_uint(struct xs_handle *xs, const char *path, unsigned *out)
{
    char *v = xs_read(xs, XBT_NULL, path, NULL);
    if (!v)
        return -1;
    char *end;
    unsigned long x = strtoul(v, &end, 10);
    int ok = *v && !*end && x < 0x7FF0;
    free(v);
    *out = (unsigned)x;
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
        fprintf(stderr, "usage: ringbench server|client FIFODIR\n");
        return 2;
    }
    int server = !strcmp(argv[1], "server");
    struct xs_handle *xs = xs_open(0);
    unsigned self, peer;
    if (!xs || read_uint(xs, "domid", &self) < 0) {
        fprintf(stderr, "ringbench: cannot read my domid from xenstore\n");
        return 1;
    }
    double t0 = now();
    while (read_uint(xs, "data/peer", &peer) < 0) {
        if (now() - t0 > 20) {
            fprintf(stderr, "ringbench: no data/peer\n");
            return 1;
        }
        usleep(20000);
    }
    xs_close(xs);
    char path[128], c2s[4096], s2c[4096];
    snprintf(path, sizeof(path), "/local/domain/%u/data/ringbench", server ? self : peer);
    snprintf(c2s, sizeof(c2s), "%s/c2s", argv[2]);
    snprintf(s2c, sizeof(s2c), "%s/s2c", argv[2]);

    struct chan v = {.rfd = -1, .wfd = -1};
    if (server) {
        v.v = libxenvchan_server_init(NULL, (int)peer, path, RING_BYTES, RING_BYTES);
    } else {
        while (!(v.v = libxenvchan_client_init(NULL, (int)peer, path)) && now() - t0 < 20)
            usleep(50000);
    }
    if (!v.v) {
        fprintf(stderr, "ringbench: vchan setup failed\n");
        return 1;
    }
    v.v->blocking = 1;
    /* FIFOs open in the same order on both sides, so neither blocks forever. */
    struct chan p = {0};
    p.rfd = open(server ? c2s : s2c, O_RDWR);
    p.wfd = open(server ? s2c : c2s, O_RDWR);
    if (p.rfd < 0 || p.wfd < 0) {
        fprintf(stderr, "ringbench: fifos in %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    if (server) {
        int rc = serve(&v) < 0 || serve(&p) < 0;
        libxenvchan_close(v.v);
        return rc;
    }
    struct result rv, rp;
    if (measure(&v, &rv) < 0 || measure(&p, &rp) < 0) {
        fprintf(stderr, "ringbench: transfer failed\n");
        return 1;
    }
    printf("{\"bench\": \"xensim.ring.rtt64\", \"metric\": \"us\", \"value\": %.2f, "
           "\"p50\": %.2f, \"p99\": %.2f, \"baseline\": \"pipe\", \"baseline_value\": %.2f, "
           "\"baseline_p99\": %.2f, \"ratio\": %.3f}\n",
           rv.p50_us, rv.p50_us, rv.p99_us, rp.p50_us, rp.p99_us, rv.p50_us / rp.p50_us);
    printf("{\"bench\": \"xensim.ring.stream\", \"metric\": \"MiB/s\", \"value\": %.1f, "
           "\"baseline\": \"pipe\", \"baseline_value\": %.1f, \"ratio\": %.3f}\n",
           rv.mibs, rp.mibs, rv.mibs / rp.mibs);
    libxenvchan_close(v.v);
    return 0;
}
