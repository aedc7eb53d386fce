/* vchan_peer - one end of a libxenvchan channel, built against Debian's
 * libxenvchan, for the xensim fidelity test.
 *
 *   vchan_peer server          serve one client: echo each message XOR 0x5a
 *   vchan_peer client [BYTES]  send BYTES (default 4 MiB) in random-sized
 *                              messages and verify every echo; then ping every
 *                              10 ms until the server goes away
 *
 * Both read their peer's domid from their own data/peer key (written by dom0)
 * and use /local/domain/<server>/data/vchan. Lines on stdout:
 * "SERVER-READY pid=N", "EXCHANGE-OK bytes=N", "PEER-CLOSED".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libxenvchan.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#define MAX_MSG  8192
#define RING     16384 /* bytes each way: multi-page rings, larger than any message */
#define DEADLINE 20    /* seconds to find the peer */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int read_uint(struct xs_handle *xs, const char *path, unsigned *out)
{
    unsigned len;
    char *v = xs_read(xs, XBT_NULL, path, &len);
    if (!v)
        return -1;
    char *end;
    errno = 0;
    unsigned long x = strtoul(v, &end, 10);
    int ok = *v && !*end && errno == 0 && x < 0x7FF0;
    free(v);
    if (!ok)
        return -1;
    *out = (unsigned)x;
    return 0;
}

static int serve(struct libxenvchan *v)
{
    static uint8_t buf[MAX_MSG];
    for (;;) {
        uint32_t len;
        if (libxenvchan_recv(v, &len, sizeof(len)) != (int)sizeof(len))
            break;
        if (len == 0 || len > MAX_MSG) {
            fprintf(stderr, "server: bad message length %u\n", len);
            return 1;
        }
        if (libxenvchan_recv(v, buf, len) != (int)len)
            break;
        for (uint32_t i = 0; i < len; i++)
            buf[i] ^= 0x5a;
        if (libxenvchan_send(v, buf, len) != (int)len)
            break;
    }
    if (libxenvchan_is_open(v) == 0) {
        printf("PEER-CLOSED\n");
        return 0;
    }
    fprintf(stderr, "server: vchan error while the peer is still open\n");
    return 1;
}

/* One verified round trip of len bytes. 1 ok, 0 peer closed, -1 corrupt. */
static int round_trip(struct libxenvchan *v, const uint8_t *out, uint32_t len)
{
    static uint8_t in[MAX_MSG];
    if (libxenvchan_send(v, &len, sizeof(len)) != (int)sizeof(len) ||
        libxenvchan_send(v, out, len) != (int)len || libxenvchan_recv(v, in, len) != (int)len)
        return libxenvchan_is_open(v) == 0 ? 0 : -1;
    for (uint32_t i = 0; i < len; i++) {
        if (in[i] != (out[i] ^ 0x5a)) {
            fprintf(stderr, "client: byte %u of a %u-byte echo is wrong\n", i, len);
            return -1;
        }
    }
    return 1;
}

static int client(struct libxenvchan *v, unsigned long total)
{
    static uint8_t msg[MAX_MSG];
    unsigned seed = (unsigned)getpid();
    unsigned long sent = 0;
    double t0 = now();
    while (sent < total) {
        uint32_t len = 1 + (uint32_t)(rand_r(&seed) % MAX_MSG);
        if (len > total - sent)
            len = (uint32_t)(total - sent);
        for (uint32_t i = 0; i < len; i++)
            msg[i] = (uint8_t)rand_r(&seed);
        int r = round_trip(v, msg, len);
        if (r <= 0) {
            fprintf(stderr, "client: exchange failed after %lu bytes (%s)\n", sent,
                    r == 0 ? "peer closed" : "corrupt");
            return 1;
        }
        sent += len;
    }
    printf("EXCHANGE-OK bytes=%lu seconds=%.3f\n", sent, now() - t0);
    fflush(stdout);
    /* Bounded: a server that never goes away ends the run after 120 s. */
    for (int i = 0; i < 12000; i++) {
        memcpy(msg, "ping", 4);
        int r = round_trip(v, msg, 4);
        if (r == 0) {
            printf("PEER-CLOSED\n");
            return 0;
        }
        if (r < 0)
            return 1;
        usleep(10 * 1000);
    }
    fprintf(stderr, "client: server never went away\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
        fprintf(stderr, "usage: vchan_peer server | client [BYTES]\n");
        return 2;
    }
    int is_server = !strcmp(argv[1], "server");
    unsigned long total = argc > 2 ? strtoul(argv[2], NULL, 0) : 4ul << 20;
    setvbuf(stdout, NULL, _IOLBF, 0);

    struct xs_handle *xs = xs_open(0);
    if (!xs) {
        perror("xs_open");
        return 1;
    }
    unsigned self, peer;
    if (read_uint(xs, "domid", &self) < 0) {
        fprintf(stderr, "cannot read my domid from xenstore\n");
        return 1;
    }
    double t0 = now();
    while (read_uint(xs, "data/peer", &peer) < 0) {
        if (now() - t0 > DEADLINE) {
            fprintf(stderr, "no data/peer after %d s\n", DEADLINE);
            return 1;
        }
        usleep(50 * 1000);
    }
    xs_close(xs);

    char path[128];
    snprintf(path, sizeof(path), "/local/domain/%u/data/vchan", is_server ? self : peer);
    struct libxenvchan *v = NULL;
    if (is_server) {
        v = libxenvchan_server_init(NULL, (int)peer, path, RING, RING);
        if (!v) {
            perror("libxenvchan_server_init");
            return 1;
        }
        printf("SERVER-READY pid=%d\n", (int)getpid());
    } else {
        /* The server may not be up yet, or may have left stale keys: retry. */
        while (!(v = libxenvchan_client_init(NULL, (int)peer, path))) {
            if (now() - t0 > DEADLINE) {
                fprintf(stderr, "client: no server at %s after %d s\n", path, DEADLINE);
                return 1;
            }
            usleep(100 * 1000);
        }
        printf("CLIENT-CONNECTED pid=%d\n", (int)getpid());
    }
    v->blocking = 1;
    int rc = is_server ? serve(v) : client(v, total);
    libxenvchan_close(v);
    return rc;
}
