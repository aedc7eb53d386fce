/* blk-jobs - the real-Xen data-path matrix's disk jobs (scenario-matrix),
 * run in a guest on one disk: the same eight jobs on every cell of the
 * matrix, so that a cell's figures compare with another's in one run.
 *
 *   blk-jobs DEVICE SECONDS [REGION_MIB]
 *
 * Jobs, in this order, each for SECONDS over the first REGION_MIB (default
 * 48, at most the device) of DEVICE opened with O_DIRECT (the page cache
 * would measure the guest's memory, not the path):
 *   seqwrite, seqread 1 MiB and randwrite, randread 4 KiB, each at queue
 *   depth 1 and 16.
 * Depth d is d threads, each with one synchronous request at a time, so d
 * requests are outstanding at once, as an io_depth of d does (fio's own 80
 * MiB of libraries do not fit the guest's initramfs; this is what its
 * psync engine with numjobs=d does). Sequential jobs share one offset that
 * every request advances (wrapping at the region's end); random ones draw
 * 4 KiB-aligned offsets from a per-thread xorshift.
 *
 * One line a job on stdout:
 *   MX job=seqwrite bs=1048576 qd=16 ops=N bytes=N secs=S mib_s=M iops=I
 *      p50_us=A p99_us=B max_us=C errors=E
 * and "MX done errors=E". Exit 0 only with no error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <time.h>
#include <unistd.h>

#include "job-stats.h"

#define MAX_QD      16
#define MAX_SAMPLES (1u << 18) /* a thread's latency samples kept (the rest counted) */

struct job {
    const char *name;
    bool write, seq;
    uint32_t bs;
    unsigned qd;
};

static const struct job jobs[] = {
    {"seqwrite", true, true, 1u << 20, 1}, {"seqwrite", true, true, 1u << 20, 16},
    {"seqread", false, true, 1u << 20, 1}, {"seqread", false, true, 1u << 20, 16},
    {"randwrite", true, false, 4096, 1},   {"randwrite", true, false, 4096, 16},
    {"randread", false, false, 4096, 1},   {"randread", false, false, 4096, 16},
};

struct run {
    const char *dev;
    const struct job *j;
    uint64_t region, t_end_ns;
    atomic_uint_fast64_t next; /* sequential: the next request's number */
};

struct worker {
    struct run *r;
    pthread_t t;
    unsigned idx;
    uint64_t ops, errors;
    uint32_t *lat_us; /* MAX_SAMPLES */
    uint32_t nlat;
    int err; /* first errno */
};

static void *work(void *arg)
{
    struct worker *w = arg;
    const struct job *j = w->r->j;
    int fd = open(w->r->dev, (j->write ? O_WRONLY : O_RDONLY) | O_DIRECT);
    if (fd < 0) {
        w->err = errno;
        w->errors++;
        return NULL;
    }
    void *buf;
    if (posix_memalign(&buf, 4096, j->bs)) {
        w->err = ENOMEM;
        w->errors++;
        close(fd);
        return NULL;
    }
    /* Data that does not compress or repeat per block (a backend that
     * dedups or compresses would otherwise win). */
    uint64_t x = 0x9E3779B97F4A7C15ull * (w->idx + 1);
    for (size_t k = 0; k < j->bs / 8; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ((uint64_t *)buf)[k] = x;
    }
    uint64_t blocks = w->r->region / j->bs, rnd = x | 1;
    while (js_now_ns() < w->r->t_end_ns) {
        uint64_t b;
        if (j->seq) {
            b = atomic_fetch_add(&w->r->next, 1) % blocks;
        } else {
            rnd ^= rnd << 13;
            rnd ^= rnd >> 7;
            rnd ^= rnd << 17;
            b = rnd % blocks;
        }
        ((uint64_t *)buf)[0] = b; /* each write's block differs */
        uint64_t t0 = js_now_ns();
        ssize_t n = j->write ? pwrite(fd, buf, j->bs, (off_t)(b * j->bs))
                             : pread(fd, buf, j->bs, (off_t)(b * j->bs));
        uint64_t us = (js_now_ns() - t0) / 1000u;
        if (n != (ssize_t)j->bs) {
            if (!w->err)
                w->err = n < 0 ? errno : EIO;
            w->errors++;
            if (w->errors > 100)
                break; /* a dead device: do not spin */
            continue;
        }
        w->ops++;
        if (w->nlat < MAX_SAMPLES)
            w->lat_us[w->nlat++] = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
    }
    free(buf);
    close(fd);
    return NULL;
}

static uint64_t run_job(const char *dev, const struct job *j, unsigned secs, uint64_t region)
{
    struct run r = {.dev = dev, .j = j, .region = region};
    atomic_init(&r.next, 0);
    struct worker w[MAX_QD];
    memset(w, 0, sizeof(w));
    uint64_t t0 = js_now_ns();
    r.t_end_ns = t0 + (uint64_t)secs * 1000000000u;
    unsigned started = 0;
    for (unsigned i = 0; i < j->qd; i++) {
        w[i].r = &r;
        w[i].idx = i;
        w[i].lat_us = malloc(MAX_SAMPLES * sizeof(uint32_t));
        if (!w[i].lat_us || pthread_create(&w[i].t, NULL, work, &w[i])) {
            free(w[i].lat_us);
            w[i].lat_us = NULL;
            w[i].errors++;
            w[i].err = ENOMEM;
            break;
        }
        started++;
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(w[i].t, NULL);
    double el = (double)(js_now_ns() - t0) / 1e9;
    uint64_t ops = 0, errors = 0, nlat = 0;
    int err = 0;
    for (unsigned i = 0; i < j->qd; i++) {
        ops += w[i].ops;
        errors += w[i].errors;
        nlat += w[i].nlat;
        if (!err)
            err = w[i].err;
    }
    uint32_t *all = malloc((nlat ? nlat : 1) * sizeof(uint32_t));
    uint64_t k = 0;
    for (unsigned i = 0; i < j->qd; i++) {
        if (all && w[i].lat_us)
            memcpy(all + k, w[i].lat_us, w[i].nlat * sizeof(uint32_t));
        k += w[i].nlat;
        free(w[i].lat_us);
    }
    struct js_pct pc = js_percentiles(all, nlat);
    free(all);
    uint64_t bytes = ops * j->bs;
    printf("MX job=%s bs=%u qd=%u ops=%llu bytes=%llu secs=%.2f mib_s=%.1f iops=%.0f "
           "p50_us=%u p99_us=%u max_us=%u errors=%llu%s%s\n",
           j->name, j->bs, j->qd, (unsigned long long)ops, (unsigned long long)bytes, el,
           (double)bytes / el / 1048576.0, (double)ops / el, pc.p50, pc.p99, pc.max,
           (unsigned long long)errors, err ? " first_error=" : "", err ? strerror(err) : "");
    fflush(stdout);
    return errors;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: blk-jobs DEVICE SECONDS [REGION_MIB]\n");
        return 2;
    }
    const char *dev = argv[1];
    char *end;
    unsigned long secs = strtoul(argv[2], &end, 10);
    if (*end || !secs || secs > 3600) {
        fprintf(stderr, "blk-jobs: SECONDS must be 1..3600, not '%s'\n", argv[2]);
        return 2;
    }
    unsigned long mib = 48;
    if (argc == 4) {
        mib = strtoul(argv[3], &end, 10);
        if (*end || !mib || mib > (1ul << 20)) {
            fprintf(stderr, "blk-jobs: REGION_MIB must be 1..1048576, not '%s'\n", argv[3]);
            return 2;
        }
    }
    int fd = open(dev, O_RDONLY);
    uint64_t size = 0;
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        size = (uint64_t)st.st_size; /* a file: blk-jobs tried out off Xen */
    else if (fd >= 0 && ioctl(fd, BLKGETSIZE64, &size) < 0)
        size = 0;
    if (fd < 0 || !size) {
        fprintf(stderr, "blk-jobs: %s: %s\n", dev, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    close(fd);
    uint64_t region = (uint64_t)mib << 20;
    if (region > size)
        region = size & ~((uint64_t)(1u << 20) - 1);
    if (region < (1u << 20)) {
        fprintf(stderr, "blk-jobs: %s holds %llu bytes, less than 1 MiB\n", dev,
                (unsigned long long)size);
        return 1;
    }
    printf("MX start dev=%s secs=%lu region_mib=%llu\n", dev, secs,
           (unsigned long long)(region >> 20));
    fflush(stdout);
    uint64_t errors = 0;
    for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
        errors += run_job(dev, &jobs[i], (unsigned)secs, region);
    printf("MX done errors=%llu\n", (unsigned long long)errors);
    return errors ? 1 : 0;
}
