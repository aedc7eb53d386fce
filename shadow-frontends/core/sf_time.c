/* sf_time.c - monotonic time. */
#define _GNU_SOURCE
#include "sf_time.h"

#include <time.h>

uint64_t sf_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
