/* blkbench - blkback against direct I/O on its backing file, same process,
 * same sizes: sequential write and read throughput (1 MiB requests, one in
 * flight, writes ended by a flush; best of 3 alternating passes) and 4 KiB
 * random read latency (each offset read both ways, in alternating order, so
 * that neither side gets the other's cache warmth).
 *
 *   blkbench FE-DIR FILE [MIB]     in a guest domain whose vbd FE-DIR is
 *                                  served by blkback (cache=none) from FILE
 * Prints one JSON object a line (see bench/README.md).
 */
#define _GNU_SOURCE
#include "tfront.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_SECT 2048u /* 1 MiB */
#define RAND_READS 2000u

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One pass: via blkback (t) or direct (fd). Returns seconds, or -1. */
static double seq(struct tf *t, int fd, int op, unsigned char *buf, uint64_t chunks)
{
    double t0 = now();
    for (uint64_t c = 0; c < chunks; c++) {
        uint64_t s = c * CHUNK_SECT;
        if (t) {
            if (tf_rw(t, op, s, CHUNK_SECT, buf) < 0)
                return -1;
        } else {
            size_t n = (size_t)CHUNK_SECT * TF_SECTOR;
            ssize_t r = op == BLKIF_OP_WRITE ? pwrite(fd, buf, n, (off_t)(s * TF_SECTOR))
                                             : pread(fd, buf, n, (off_t)(s * TF_SECTOR));
            if (r != (ssize_t)n)
                return -1;
        }
    }
    if (op == BLKIF_OP_WRITE) {
        if (t ? tf_simple(t, BLKIF_OP_FLUSH_DISKCACHE) != 0 : fdatasync(fd) < 0)
            return -1;
    }
    return now() - t0;
}

static int read4k(struct tf *t, int fd, unsigned char *buf, uint64_t s, double *us)
{
    double t0 = now();
    if (t ? tf_rw(t, BLKIF_OP_READ, s, 8, buf) < 0
          : pread(fd, buf, 4096, (off_t)(s * TF_SECTOR)) != 4096)
        return -1;
    *us = (now() - t0) * 1e6;
    return 0;
}

/* 4 KiB reads at random page offsets, each both ways; latencies in µs. */
static int randread(struct tf *t, int fd, unsigned char *buf, uint64_t pages, double *lv,
                    double *lb)
{
    uint64_t x = 88172645463325252ull;
    for (unsigned i = 0; i < RAND_READS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t s = (x % pages) * 8;
        int r = i % 2 ? read4k(t, -1, buf, s, &lv[i]) | read4k(NULL, fd, buf, s, &lb[i])
                      : read4k(NULL, fd, buf, s, &lb[i]) | read4k(t, -1, buf, s, &lv[i]);
        if (r < 0)
            return -1;
    }
    qsort(lv, RAND_READS, sizeof(*lv), cmp_double);
    qsort(lb, RAND_READS, sizeof(*lb), cmp_double);
    return 0;
}

static double best(double a, double b)
{
    return a < 0 || b < 0 ? -1 : a < b ? a : b;
}

static void emit_rate(const char *name, double mib, double secs, double base_secs)
{
    double v = mib / secs, b = mib / base_secs;
    printf("{\"bench\": \"%s\", \"metric\": \"MiB/s\", \"value\": %.1f, \"baseline\": "
           "\"direct-io\", \"baseline_value\": %.1f, \"ratio\": %.3f}\n",
           name, v, b, v / b);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: blkbench FE-DIR FILE [MIB]\n");
        return 2;
    }
    uint64_t mib = argc > 3 ? strtoull(argv[3], NULL, 10) : 64;
    struct tf *t = tf_open(argv[1]);
    int fd = open(argv[2], O_RDWR | O_DIRECT);
    unsigned char *buf;
    if (!t || fd < 0 || posix_memalign((void **)&buf, 4096, (size_t)CHUNK_SECT * TF_SECTOR)) {
        fprintf(stderr, "blkbench: setting up: %s\n", t ? "cannot open FILE O_DIRECT" : "tf_open");
        return 1;
    }
    struct tf_opts o;
    tf_default_opts(&o);
    o.persistent = true;
    o.indirect = true;
    o.order = 2;
    if (tf_connect(t, &o) < 0) {
        fprintf(stderr, "blkbench: connect: %s\n", t->err);
        return 1;
    }
    uint64_t chunks = mib, disk_chunks = t->sectors / CHUNK_SECT;
    if (chunks > disk_chunks)
        chunks = disk_chunks;
    memset(buf, 0x5a, (size_t)CHUNK_SECT * TF_SECTOR);
    double bw = 1e9, vw = 1e9, br = 1e9, vr = 1e9;
    for (int pass = 0; pass < 3; pass++) {
        bw = best(bw, seq(NULL, fd, BLKIF_OP_WRITE, buf, chunks));
        vw = best(vw, seq(t, -1, BLKIF_OP_WRITE, buf, chunks));
        br = best(br, seq(NULL, fd, BLKIF_OP_READ, buf, chunks));
        vr = best(vr, seq(t, -1, BLKIF_OP_READ, buf, chunks));
    }
    static double lb[RAND_READS], lv[RAND_READS];
    if (bw < 0 || vw < 0 || br < 0 || vr < 0 || randread(t, fd, buf, chunks * 256, lv, lb) < 0) {
        fprintf(stderr, "blkbench: I/O failed: %s\n", t->err);
        return 1;
    }
    emit_rate("blk.seqwrite", (double)chunks, vw, bw);
    emit_rate("blk.seqread", (double)chunks, vr, br);
    double p50 = lv[RAND_READS / 2], p99 = lv[RAND_READS * 99 / 100];
    double b50 = lb[RAND_READS / 2];
    printf("{\"bench\": \"blk.randread4k\", \"metric\": \"us\", \"value\": %.1f, \"p50\": %.1f, "
           "\"p99\": %.1f, \"baseline\": \"direct-io\", \"baseline_value\": %.1f, \"ratio\": "
           "%.3f}\n",
           p50, p50, p99, b50, p50 / b50);
    tf_close(t);
    tf_free(t);
    close(fd);
    free(buf);
    return 0;
}
