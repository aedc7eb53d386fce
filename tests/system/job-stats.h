/* job-stats.h - what the data-path matrix's job programs (blk-jobs,
 * net-jobs) share: the monotonic clock their jobs are timed on and the
 * percentiles of a job's latency samples. */
#ifndef JOB_STATS_H
#define JOB_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t js_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline int js_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

struct js_pct {
    uint32_t p50, p99, max;
};

/* The median, 99th percentile and largest of v[0..n) (sorted in place); all
 * 0 for no sample. */
static inline struct js_pct js_percentiles(uint32_t *v, size_t n)
{
    struct js_pct p = {0, 0, 0};
    if (!v || !n)
        return p;
    qsort(v, n, sizeof(v[0]), js_cmp_u32);
    p.p50 = v[(n - 1) / 2];
    p.p99 = v[(n - 1) * 99 / 100];
    p.max = v[n - 1];
    return p;
}

#endif
