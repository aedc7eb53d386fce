/* log.c - shadowd's clock and log (log.h). */
#define _GNU_SOURCE
#include "log.h"

#include "dom.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static uint64_t t0;
static const char *prog = "shadowd";

void sd_log_start(uint64_t start)
{
    t0 = start;
}

uint64_t sd_log_t0(void)
{
    return t0;
}

void sd_log_prog(const char *name)
{
    prog = name;
}

uint64_t sd_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static void vlog(const char *who, const char *fmt, va_list ap)
{
    uint64_t t = sd_now() - t0;
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "%s[%llu.%03llu]: %s%s%s\n", prog, (unsigned long long)(t / 1000),
            (unsigned long long)(t % 1000), who ? who : "", who ? ": " : "", msg);
}

void sd_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(NULL, fmt, ap);
    va_end(ap);
}

void sd_dlog(const struct sd_dom *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(d->conf->name, fmt, ap);
    va_end(ap);
}
