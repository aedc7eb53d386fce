/* disk-verify - the full-system tier's disk workload, run in a guest on the
 * shadowed disk (an NBD device): writes blocks whose contents are a function
 * of (pass, block), flushes, reads each back and compares, pass after pass,
 * until SIGTERM; then reads every block it wrote once more against what
 * was last written to it. Any I/O error or mismatch is an error; the longest single
 * operation is the pause the application saw (a recovery shows up there).
 *
 *   disk-verify DEVICE [BLOCKS] [BLOCK_KIB]
 *
 * Lines on stdout: "WL start ...", "WL progress ..." every 2 s, "WL stall ..."
 * for an operation over 1 s, "WL ERROR ..." for each error, and at the end
 * "WL DONE errors=N ...". Exit 0 only with no error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x55534b57564552ull /* "USKWVER" */

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

/* The contents of block i written in pass p: a header, then xorshift64
 * words seeded by (p, i). Pass 0 means "never written": all zero. */
static void fill(uint64_t *w, size_t words, uint64_t pass, uint64_t i)
{
    if (pass == 0) {
        memset(w, 0, words * 8);
        return;
    }
    uint64_t x = (pass * 0x9E3779B97F4A7C15ull) ^ (i + 1) * 0xBF58476D1CE4E5B9ull;
    w[0] = MAGIC;
    w[1] = pass;
    w[2] = i;
    for (size_t k = 3; k < words; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w[k] = x;
    }
}

static uint64_t max_stall, ops, errors, stall_at;

static void timed(uint64_t t0, const char *what, uint64_t i)
{
    uint64_t d = now_ms() - t0;
    if (d > max_stall) {
        max_stall = d;
        stall_at = ops;
    }
    if (d > 1000)
        printf("WL stall ms=%llu op=%s block=%llu\n", (unsigned long long)d, what,
               (unsigned long long)i);
    ops++;
}

static int xfer(int fd, bool wr, void *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = wr ? pwrite(fd, (char *)buf + done, len - done, off + (off_t)done)
                       : pread(fd, (char *)buf + done, len - done, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        done += (size_t)n;
    }
    return 0;
}

static int check_block(int fd, uint64_t *buf, uint64_t *want, size_t bs, uint64_t pass, uint64_t i,
                       const char *phase)
{
    uint64_t t0 = now_ms();
    int rc = xfer(fd, false, buf, bs, (off_t)(i * bs));
    timed(t0, "read", i);
    if (rc < 0) {
        printf("WL ERROR %s read block=%llu: %s\n", phase, (unsigned long long)i, strerror(-rc));
        errors++;
        return -1;
    }
    fill(want, bs / 8, pass, i);
    if (memcmp(buf, want, bs)) {
        printf("WL ERROR %s mismatch block=%llu want pass=%llu, found magic=%llx pass=%llu "
               "block=%llu\n",
               phase, (unsigned long long)i, (unsigned long long)pass, (unsigned long long)buf[0],
               (unsigned long long)buf[1], (unsigned long long)buf[2]);
        errors++;
        return -1;
    }
    return 0;
}

static int parse(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long nblocks = 256, kib = 64;
    if (argc < 2 || argc > 4 || (argc > 2 && parse(argv[2], 1, 1u << 20, &nblocks) < 0) ||
        (argc > 3 && parse(argv[3], 4, 4096, &kib) < 0) || kib % 4) {
        fprintf(stderr, "usage: disk-verify DEVICE [BLOCKS (1..1048576)] [BLOCK_KIB (4..4096, "
                        "a multiple of 4)]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    size_t bs = (size_t)kib * 1024;
    int fd = open(argv[1], O_RDWR | O_DIRECT | O_CLOEXEC);
    if (fd < 0) {
        printf("WL ERROR open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    if (size < (off_t)(nblocks * bs)) {
        printf("WL ERROR %s: %lld bytes, need %llu\n", argv[1], (long long)size,
               (unsigned long long)(nblocks * bs));
        return 1;
    }
    uint64_t *buf, *want;
    uint64_t *last = calloc(nblocks, sizeof(*last)); /* pass last written to each block */
    if (posix_memalign((void **)&buf, 4096, bs) || posix_memalign((void **)&want, 4096, bs) ||
        !last) {
        printf("WL ERROR out of memory\n");
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("WL start device=%s blocks=%lu block_kib=%lu\n", argv[1], nblocks, kib);
    uint64_t t_start = now_ms(), next_report = t_start + 2000, pass = 0, bytes = 0;
    while (!stop) {
        pass++;
        for (uint64_t i = 0; i < nblocks && !stop; i++) {
            fill(buf, bs / 8, pass, i);
            uint64_t t0 = now_ms();
            int rc = xfer(fd, true, buf, bs, (off_t)(i * bs));
            timed(t0, "write", i);
            if (rc < 0) {
                printf("WL ERROR write block=%llu: %s\n", (unsigned long long)i, strerror(-rc));
                errors++;
                continue;
            }
            last[i] = pass;
            bytes += bs;
            if (i % 8 == 7) {
                t0 = now_ms();
                if (fdatasync(fd) < 0) {
                    printf("WL ERROR fdatasync: %s\n", strerror(errno));
                    errors++;
                }
                timed(t0, "flush", i);
            }
            check_block(fd, buf, want, bs, pass, i, "pass");
            bytes += bs;
            if (now_ms() >= next_report) {
                printf("WL progress pass=%llu block=%llu ops=%llu MiB=%llu errors=%llu "
                       "max_stall_ms=%llu\n",
                       (unsigned long long)pass, (unsigned long long)i, (unsigned long long)ops,
                       (unsigned long long)(bytes >> 20), (unsigned long long)errors,
                       (unsigned long long)max_stall);
                next_report = now_ms() + 2000;
            }
        }
    }
    uint64_t t0 = now_ms();
    if (fdatasync(fd) < 0) {
        printf("WL ERROR final fdatasync: %s\n", strerror(errno));
        errors++;
    }
    timed(t0, "flush", 0);
    /* A block this run never wrote (stopped inside its first pass) holds
     * whatever the disk had before - another run's data on a reused disk:
     * not this run's to judge. */
    uint64_t verified = 0, written = 0;
    for (uint64_t i = 0; i < nblocks; i++) {
        if (!last[i])
            continue;
        written++;
        if (check_block(fd, buf, want, bs, last[i], i, "final") == 0)
            verified++;
    }
    printf("WL DONE errors=%llu passes=%llu ops=%llu MiB=%llu verified=%llu/%llu max_stall_ms=%llu "
           "(at op %llu) secs=%llu\n",
           (unsigned long long)errors, (unsigned long long)pass, (unsigned long long)ops,
           (unsigned long long)(bytes >> 20), (unsigned long long)verified,
           (unsigned long long)written, (unsigned long long)max_stall, (unsigned long long)stall_at,
           (unsigned long long)((now_ms() - t_start) / 1000));
    close(fd);
    free(buf);
    free(want);
    free(last);
    return errors ? 1 : 0;
}
