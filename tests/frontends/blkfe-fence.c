/* blkfe-fence.c - what a failed driver domain's late writes do to the disk,
 * for test-blkfront-hot-standby-fencing.sh: the shadow blkfront library in a
 * guest rewriting one block with numbered versions, so that whichever
 * version the disk holds at the end names the write that put it there.
 *
 *   blkfe-fence --device DIR --control DIR [--backing FILE] [--rounds N]
 *               [--block-kib K] [--deadline-ms N] [--seconds S] [--side-mib M]
 *
 * Each round: write versions 1, 2, 3, ... of the block at offset 0, each
 * write then a flush, each waiting for its acknowledgement (one request in
 * flight at a time; an acknowledged version is durable, so a recovery
 * replays only what was in flight, and right after a FENCE-PROGRESS line
 * the next version's write is on its way), until
 * CONTROL/hold.<round> exists; print FENCE-HOLD; wait for
 * CONTROL/read.<round>; read the block back through the frontend and, with
 * --backing, from the backing file; print
 *   FENCE-READ <round> acked=<last acknowledged> device=<v> backing=<v>
 * where <v> is the version every sector of the block holds, or "mixed" (the
 * sectors differ), "none" (not a version of this run). While writing:
 * FENCE-PROGRESS acked=<v> recoveries=<n> after an acknowledgement, at most
 * every 100 ms (after every one when writes are slow). Every wait is bounded
 * by --seconds (default 60): past it, FENCE-FAIL. Exits 0 after the last
 * round (FENCE-OK), 1 on any error of the frontend (a pause, never an
 * error).
 *
 * --side-mib M: a second thread, while CONTROL/side exists, writes 4 KiB
 * blocks from M MiB on, each to sectors not written before (the next block
 * of a 4 MiB region, every 20 ms), and reads each back and checks it - other
 * writes and reads than the block's, to show what a hold for the fence lets
 * through: FENCE-SIDE ops=<writes and reads done> max-ms=<the slowest since
 * the last line> at most every 100 ms. No flush (a flush waits for every
 * write before it, held ones too). */
#define _GNU_SOURCE
#include "blk_frontend.h"
#include "sf_time.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECTOR      512u
#define MAGIC       0x756e6465727374ull /* "understudy"-ish: marks our writes */
#define MAX_VERSION (1ull << 40)

static void logline(enum sf_log_level level, const char *line)
{
    static const char *const lv[] = {"error", "info", "debug"};
    fprintf(stderr, "blkfe[%s]: %s\n", lv[level], line);
}

static bool exists(const char *dir, const char *what, unsigned round)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s.%u", dir, what, round);
    return access(p, F_OK) == 0;
}

/* Every sector: the magic, the version, the sector's index. */
static void fill(uint8_t *buf, size_t len, uint64_t version)
{
    for (size_t s = 0; s < len / SECTOR; s++) {
        uint64_t w[3] = {MAGIC, version, s};
        memset(buf + s * SECTOR, (int)(version & 0xff), SECTOR);
        memcpy(buf + s * SECTOR, w, sizeof(w));
    }
}

/* The version the whole block holds, or "mixed" / "none". */
static void decode(const uint8_t *buf, size_t len, char *out, size_t outlen)
{
    uint64_t v0 = 0;
    for (size_t s = 0; s < len / SECTOR; s++) {
        uint64_t w[3];
        memcpy(w, buf + s * SECTOR, sizeof(w));
        if (w[0] != MAGIC || w[2] != s || !w[1] || w[1] >= MAX_VERSION) {
            snprintf(out, outlen, "none");
            return;
        }
        if (s && w[1] != v0) {
            snprintf(out, outlen, "mixed");
            return;
        }
        v0 = w[1];
    }
    snprintf(out, outlen, "%" PRIu64, v0);
}

#define SIDE_BLOCK   4096u
#define SIDE_REGION  (4u << 20)
#define SIDE_PACE_US 20000u

struct side {
    struct blkfe *fe;
    const char *control;
    uint64_t base;
    atomic_bool stop;
    pthread_t thread;
    bool started;
};

/* The side thread: see the header. Stops at the first error (logged). */
static void *side_main(void *arg)
{
    struct side *sd = arg;
    uint8_t w[SIDE_BLOCK], r[SIDE_BLOCK];
    uint64_t ops = 0, max_ms = 0, next_note = 0, k = 0;
    char flag[4096];
    snprintf(flag, sizeof(flag), "%s/side", sd->control);
    while (!atomic_load(&sd->stop)) {
        if (access(flag, F_OK) != 0) {
            usleep(SIDE_PACE_US);
            continue;
        }
        uint64_t off = sd->base + (k % (SIDE_REGION / SIDE_BLOCK)) * SIDE_BLOCK, t0 = sf_now_ms();
        k++;
        memset(w, (int)(k & 0xff), sizeof(w));
        memcpy(w, &k, sizeof(k));
        int err = blkfe_pwrite(sd->fe, w, SIDE_BLOCK, off);
        if (!err)
            err = blkfe_pread(sd->fe, r, SIDE_BLOCK, off);
        if (err || memcmp(w, r, SIDE_BLOCK)) {
            printf("FENCE-FAIL side block at %" PRIu64 ": %s\n", off,
                   err ? strerror(err) : "read back differs");
            return NULL;
        }
        uint64_t t = sf_now_ms() - t0;
        max_ms = t > max_ms ? t : max_ms;
        ops += 2;
        if (sf_now_ms() >= next_note) {
            next_note = sf_now_ms() + 100;
            printf("FENCE-SIDE ops=%" PRIu64 " max-ms=%" PRIu64 "\n", ops, max_ms);
            max_ms = 0;
        }
        usleep(SIDE_PACE_US);
    }
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: blkfe-fence --device DIR --control DIR [options] (see the source)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct blkfe_config fc;
    blkfe_defaults(&fc);
    fc.log = logline;
    const char *control = NULL, *backing = NULL;
    unsigned rounds = 1, block_kib = 64, seconds = 60, side_mib = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        unsigned long n = strtoul(v, NULL, 10);
        if (!strcmp(a, "--device"))
            fc.device = v;
        else if (!strcmp(a, "--control"))
            control = v;
        else if (!strcmp(a, "--backing"))
            backing = v;
        else if (!strcmp(a, "--rounds") && n && n < 100)
            rounds = (unsigned)n;
        else if (!strcmp(a, "--block-kib") && n && n <= 1024)
            block_kib = (unsigned)n;
        else if (!strcmp(a, "--deadline-ms") && n)
            fc.deadline_ms = (unsigned)n;
        else if (!strcmp(a, "--seconds") && n)
            seconds = (unsigned)n;
        else if (!strcmp(a, "--side-mib") && n && n < 1024)
            side_mib = (unsigned)n;
        else
            usage();
    }
    if (!fc.device || !control || argc % 2 == 0)
        usage();
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct blkfe *fe = blkfe_open(&fc);
    if (!fe) {
        printf("FENCE-FAIL open %s\n", fc.device);
        return 1;
    }
    size_t len = (size_t)block_kib << 10;
    uint8_t *buf = malloc(len);
    int bfd = backing ? open(backing, O_RDONLY | O_CLOEXEC) : -1;
    if (!buf || (backing && bfd < 0) || len > blkfe_size(fe)) {
        printf("FENCE-FAIL setup: %s\n", strerror(errno));
        return 1;
    }
    struct side sd = {.fe = fe, .control = control, .base = (uint64_t)side_mib << 20};
    if (side_mib) {
        if (sd.base < len || sd.base + SIDE_REGION > blkfe_size(fe) ||
            pthread_create(&sd.thread, NULL, side_main, &sd)) {
            printf("FENCE-FAIL side region at %u MiB\n", side_mib);
            return 1;
        }
        sd.started = true;
    }
    printf("FENCE-START block=%zu\n", len);
    uint64_t version = 0, acked = 0;
    int rc = 1;
    for (unsigned r = 1; r <= rounds; r++) {
        uint64_t until = sf_now_ms() + (uint64_t)seconds * 1000u, next_note = 0;
        while (!exists(control, "hold", r) && sf_now_ms() < until && version + 1 < MAX_VERSION) {
            fill(buf, len, ++version);
            int err = blkfe_pwrite(fe, buf, (uint32_t)len, 0);
            if (err) {
                printf("FENCE-FAIL write version %" PRIu64 ": %s\n", version, strerror(err));
                goto out;
            }
            if ((err = blkfe_flush(fe))) {
                printf("FENCE-FAIL flush after version %" PRIu64 ": %s\n", version, strerror(err));
                goto out;
            }
            acked = version;
            if (sf_now_ms() >= next_note) {
                next_note = sf_now_ms() + 100;
                printf("FENCE-PROGRESS acked=%" PRIu64 " recoveries=%" PRIu64 "\n", acked,
                       blkfe_recoveries(fe));
            }
        }
        printf("FENCE-HOLD %u acked=%" PRIu64 "\n", r, acked);
        while (!exists(control, "read", r) && sf_now_ms() < until)
            usleep(20000);
        if (sf_now_ms() >= until) {
            printf("FENCE-FAIL round %u: no hold or read within %u s\n", r, seconds);
            goto out;
        }
        char dev[32], back[32] = "-";
        int err = blkfe_pread(fe, buf, (uint32_t)len, 0);
        if (err) {
            printf("FENCE-FAIL read: %s\n", strerror(err));
            goto out;
        }
        decode(buf, len, dev, sizeof(dev));
        if (bfd >= 0) {
            if (pread(bfd, buf, len, 0) != (ssize_t)len) {
                printf("FENCE-FAIL read %s: short\n", backing);
                goto out;
            }
            decode(buf, len, back, sizeof(back));
        }
        printf("FENCE-READ %u acked=%" PRIu64 " device=%s backing=%s\n", r, acked, dev, back);
    }
    printf("FENCE-OK rounds=%u recoveries=%" PRIu64 "\n", rounds, blkfe_recoveries(fe));
    rc = 0;
out:
    if (sd.started) {
        atomic_store(&sd.stop, true);
        pthread_join(sd.thread, NULL);
    }
    if (bfd >= 0)
        close(bfd);
    free(buf);
    blkfe_close(fe);
    return rc;
}
