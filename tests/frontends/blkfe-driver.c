/* blkfe-driver.c - runs the shadow blkfront library (shadow-frontends/blk,
 * the code the nbdkit plugin calls) in a guest domain without nbdkit, under
 * a verifying workload, so that tests run the frontend ASan+UBSan-built.
 *
 *   blkfe-driver --device DIR [--seconds S] [--threads T] [--region-mib M]
 *                [--seed N] [--flush-every N] [--trim-every N]
 *                [--backing FILE] [--min-recoveries N] [--deadline-ms N]
 *                [--max-retained-mib N] [--max-grants N] [--max-ring-order N]
 *                [--max-indirect N] [--max-held N] [--rate N] [--expect-fail]
 *                [--restart-only]
 *
 * T threads each own a stripe of the first M MiB and loop for S seconds over
 * random writes (random sizes, contents derived from the seed), reads that
 * must return exactly what was last acknowledged, flushes and discards
 * (discarded sectors are don't-care until rewritten); with --rate N each
 * thread pauses 1/N s after each request (a light load: bench/parts/scale.sh
 * runs a hundred of these at once). Any error is a
 * failure: the workload must see a pause, never an error. At the end: a
 * flush, a full read-back of the region, and with --backing a check that
 * the backing file holds every acknowledged write. Prints DRIVER-PROGRESS
 * lines and DRIVER-OK or DRIVER-FAIL. --expect-fail inverts: the device
 * must end failed with EIO (a different disk behind the new backend).
 * --restart-only runs the frontend in its restart-only mode and allows EIO
 * (and only EIO): a failed write leaves its sectors unknown until rewritten,
 * a failed read is not checked; at least one EIO must be seen when there
 * were recoveries, and after the workload the device must serve the final
 * flush and read-back without error (DRIVER-OK ... eio=N). */
#define _GNU_SOURCE
#include "blk_frontend.h"
#include "sf_time.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct opts {
    const char *device, *backing;
    unsigned seconds, threads, region_mib, flush_every, trim_every, min_recoveries, rate;
    uint64_t seed;
    bool expect_fail, restart_only;
    struct blkfe_config fc;
};

static struct opts o;
static struct blkfe *fe;
static uint8_t *model; /* expected contents of the region */
static uint8_t *known; /* per sector: 1 if model is exact, 0 after a discard */
static uint64_t region, ss;
static atomic_bool failed;
static atomic_uint_fast64_t n_writes, n_reads, n_flushes, n_trims, n_bytes, n_eio;
static uint64_t t_end;

static void logline(enum sf_log_level level, const char *line)
{
    static const char *const lv[] = {"error", "info", "debug"};
    fprintf(stderr, "blkfe[%s]: %s\n", lv[level], line);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!atomic_exchange(&failed, true))
        printf("DRIVER-FAIL %s\n", msg);
    fflush(stdout);
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* Compare buf (read from off) with the model. */
static bool verify(const uint8_t *buf, uint64_t len, uint64_t off, const char *what)
{
    for (uint64_t s = 0; s < len; s += ss) {
        uint64_t sec = (off + s) / ss;
        if (known[sec] && memcmp(buf + s, model + off + s, ss)) {
            fail("%s: sector-size block %" PRIu64 " (byte %" PRIu64 ") differs from the last "
                 "acknowledged write",
                 what, sec, off + s);
            return false;
        }
    }
    return true;
}

/* An error the run allows (restart only: EIO), counted. */
static bool allowed(int err)
{
    if (!o.restart_only || err != EIO)
        return false;
    n_eio++;
    return true;
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    uint64_t rng = o.seed * 1000003u + id + 1;
    uint64_t stripe = region / o.threads / ss * ss;
    uint64_t base = stripe * id;
    uint64_t maxlen = 64 * 1024 < stripe ? 64 * 1024 : stripe;
    uint8_t *buf = malloc(1u << 20);
    if (!buf) {
        fail("malloc");
        return NULL;
    }
    for (uint64_t n = 1; !atomic_load(&failed) && sf_now_ms() < t_end; n++) {
        uint64_t r = xorshift(&rng);
        uint64_t len = ((r % (maxlen / ss)) + 1) * ss;
        if (r >> 60 == 0) /* now and then a large one: indirect requests, splitting */
            len = ((1u << 20) < stripe ? (1u << 20) : stripe) / ss * ss;
        uint64_t off = base + (xorshift(&rng) % ((stripe - len) / ss + 1)) * ss;
        int err;
        if (o.flush_every && n % o.flush_every == 0) {
            if ((err = blkfe_flush(fe)) && !allowed(err))
                fail("flush: %s", strerror(err));
            n_flushes++;
        } else if (o.trim_every && n % o.trim_every == 0 && blkfe_can_trim(fe)) {
            if ((err = blkfe_trim(fe, (uint32_t)len, off)) && !allowed(err))
                fail("trim %" PRIu64 "+%" PRIu64 ": %s", off, len, strerror(err));
            memset(known + off / ss, 0, len / ss);
            n_trims++;
        } else if (xorshift(&rng) % 3) {
            uint64_t tag = xorshift(&rng);
            for (uint64_t i = 0; i < len; i += 8) {
                uint64_t v = tag ^ ((off + i) * 0x9E3779B97F4A7C15ull);
                memcpy(buf + i, &v, 8);
            }
            if ((err = blkfe_pwrite(fe, buf, (uint32_t)len, off)) && !allowed(err))
                fail("pwrite %" PRIu64 "+%" PRIu64 ": %s", off, len, strerror(err));
            memcpy(model + off, buf, len);
            /* A failed write may have landed in part, or not at all. */
            memset(known + off / ss, err ? 0 : 1, len / ss);
            n_writes++;
            n_bytes += len;
        } else {
            if ((err = blkfe_pread(fe, buf, (uint32_t)len, off))) {
                if (!allowed(err))
                    fail("pread %" PRIu64 "+%" PRIu64 ": %s", off, len, strerror(err));
            } else
                verify(buf, len, off, "read");
            n_reads++;
        }
        if (o.rate)
            usleep(1000000u / o.rate);
    }
    free(buf);
    return NULL;
}

static bool check_backing(void)
{
    int fd = open(o.backing, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fail("open %s: %s", o.backing, strerror(errno));
        return false;
    }
    uint8_t *buf = malloc(1u << 20);
    bool ok = buf != NULL;
    for (uint64_t off = 0; ok && off < region; off += 1u << 20) {
        uint64_t n = region - off < (1u << 20) ? region - off : (1u << 20);
        ssize_t got = pread(fd, buf, n, (off_t)off);
        if (got != (ssize_t)n) {
            fail("read %s at %" PRIu64 ": short", o.backing, off);
            ok = false;
            break;
        }
        ok = verify(buf, n, off, "backing file");
    }
    free(buf);
    close(fd);
    return ok;
}

static void usage(void)
{
    fprintf(stderr, "usage: blkfe-driver --device DIR [options] (see the source header)\n");
    exit(2);
}

static void parse(int argc, char **argv)
{
    o.seconds = 10;
    o.threads = 4;
    o.region_mib = 16;
    o.flush_every = 16;
    o.seed = 1;
    blkfe_defaults(&o.fc);
    o.fc.log = logline;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--expect-fail")) {
            o.expect_fail = true;
            continue;
        }
        if (!strcmp(a, "--restart-only")) {
            o.restart_only = o.fc.restart_only = true;
            o.fc.shadow = false;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        unsigned long long n = strtoull(v, NULL, 10);
        if (!strcmp(a, "--device"))
            o.device = v;
        else if (!strcmp(a, "--backing"))
            o.backing = v;
        else if (!strcmp(a, "--seconds"))
            o.seconds = (unsigned)n;
        else if (!strcmp(a, "--threads"))
            o.threads = (unsigned)n;
        else if (!strcmp(a, "--region-mib"))
            o.region_mib = (unsigned)n;
        else if (!strcmp(a, "--seed"))
            o.seed = n;
        else if (!strcmp(a, "--flush-every"))
            o.flush_every = (unsigned)n;
        else if (!strcmp(a, "--trim-every"))
            o.trim_every = (unsigned)n;
        else if (!strcmp(a, "--min-recoveries"))
            o.min_recoveries = (unsigned)n;
        else if (!strcmp(a, "--deadline-ms"))
            o.fc.deadline_ms = (unsigned)n;
        else if (!strcmp(a, "--max-retained-mib"))
            o.fc.max_retained_mib = (unsigned)n;
        else if (!strcmp(a, "--max-grants"))
            o.fc.max_grants = (unsigned)n;
        else if (!strcmp(a, "--max-ring-order"))
            o.fc.max_ring_order = (unsigned)n;
        else if (!strcmp(a, "--max-indirect"))
            o.fc.max_indirect = (unsigned)n;
        else if (!strcmp(a, "--max-held"))
            o.fc.max_held = (unsigned)n;
        else if (!strcmp(a, "--rate"))
            o.rate = (unsigned)n;
        else
            usage();
    }
    if (!o.device || !o.threads || o.threads > 64 || !o.region_mib)
        usage();
    o.fc.device = o.device;
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    fe = blkfe_open(&o.fc);
    if (!fe) {
        printf("DRIVER-FAIL open %s\n", o.device);
        return 1;
    }
    ss = blkfe_sector_size(fe);
    region = (uint64_t)o.region_mib << 20;
    if (region > blkfe_size(fe))
        region = blkfe_size(fe) / ss * ss;
    model = calloc(1, region);
    known = malloc(region / ss);
    if (!model || !known) {
        printf("DRIVER-FAIL calloc\n");
        return 1;
    }
    memset(known, 1, region / ss); /* the disk starts as zeros */
    printf("DRIVER-START size=%" PRIu64 " sector-size=%" PRIu64 " region=%" PRIu64
           " threads=%u seconds=%u seed=%" PRIu64 "\n",
           blkfe_size(fe), ss, region, o.threads, o.seconds, o.seed);
    if (o.expect_fail) {
        /* Wait (bounded) for the device to fail, then require EIO. */
        uint8_t b[4096];
        int err = 0;
        for (unsigned i = 0; i < o.seconds * 10 && blkfe_state(fe) != SF_FAILED; i++) {
            err = blkfe_pwrite(fe, b, (uint32_t)ss, 0);
            if (err)
                break;
            usleep(100000);
        }
        err = blkfe_pread(fe, b, (uint32_t)ss, 0);
        bool ok = blkfe_state(fe) == SF_FAILED && err == EIO;
        printf("%s state=%s read=%s\n", ok ? "DRIVER-OK" : "DRIVER-FAIL",
               blkfe_state(fe) == SF_FAILED ? "failed" : "not-failed", strerror(err));
        blkfe_close(fe);
        free(model);
        free(known);
        return ok ? 0 : 1;
    }
    t_end = sf_now_ms() + (uint64_t)o.seconds * 1000u;
    pthread_t th[64];
    for (unsigned i = 0; i < o.threads; i++)
        pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
    uint64_t last = sf_now_ms();
    while (sf_now_ms() < t_end && !atomic_load(&failed)) {
        usleep(100000);
        if (sf_now_ms() - last >= 1000) {
            last = sf_now_ms();
            printf("DRIVER-PROGRESS writes=%" PRIu64 " reads=%" PRIu64 " flushes=%" PRIu64
                   " recoveries=%" PRIu64 "\n",
                   (uint64_t)n_writes, (uint64_t)n_reads, (uint64_t)n_flushes,
                   blkfe_recoveries(fe));
        }
    }
    for (unsigned i = 0; i < o.threads; i++)
        pthread_join(th[i], NULL);
    int err = blkfe_flush(fe);
    if (err)
        fail("final flush: %s", strerror(err));
    uint8_t *buf = malloc(1u << 20);
    for (uint64_t off = 0; buf && !atomic_load(&failed) && off < region; off += 1u << 20) {
        uint32_t n = (uint32_t)(region - off < (1u << 20) ? region - off : (1u << 20));
        if ((err = blkfe_pread(fe, buf, n, off)))
            fail("final read at %" PRIu64 ": %s", off, strerror(err));
        else
            verify(buf, n, off, "final read");
    }
    free(buf);
    uint64_t rec = blkfe_recoveries(fe);
    if (!atomic_load(&failed) && o.backing)
        check_backing();
    if (!atomic_load(&failed) && rec < o.min_recoveries)
        fail("only %" PRIu64 " recoveries, wanted at least %u", rec, o.min_recoveries);
    if (!atomic_load(&failed) && o.restart_only && rec && !n_eio)
        fail("restart only: %" PRIu64 " recoveries and no request failed", rec);
    enum sf_state st = blkfe_state(fe);
    if (!atomic_load(&failed) && st != SF_LIVE)
        fail("device not live at the end (state %d)", st);
    if (!atomic_load(&failed))
        printf("DRIVER-OK writes=%" PRIu64 " reads=%" PRIu64 " flushes=%" PRIu64 " trims=%" PRIu64
               " bytes=%" PRIu64 " recoveries=%" PRIu64 " eio=%" PRIu64 "\n",
               (uint64_t)n_writes, (uint64_t)n_reads, (uint64_t)n_flushes, (uint64_t)n_trims,
               (uint64_t)n_bytes, rec, (uint64_t)n_eio);
    blkfe_close(fe);
    free(model);
    free(known);
    return atomic_load(&failed) ? 1 : 0;
}
