/* be_log.c - prefixed, optionally rate-limited log lines on stderr. */
#define _GNU_SOURCE
#include "be_log.h"

#include "be_loop.h"

#include <stdarg.h>
#include <stdio.h>

void be_log_init(struct be_log *lg, const char *prog, unsigned fe, unsigned devid)
{
    snprintf(lg->tag, sizeof(lg->tag), "%s[%u/%u]", prog, fe, devid);
    lg->window_ms = 0;
    lg->in_window = 0;
    lg->dropped = 0;
}

static void vline(struct be_log *lg, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    /* One write per line, so that lines from processes sharing a log interleave whole. */
    fprintf(stderr, "%s: %s\n", lg->tag, msg);
    fflush(stderr);
}

void be_log_line(struct be_log *lg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline(lg, fmt, ap);
    va_end(ap);
}

void be_log_limited(struct be_log *lg, const char *fmt, ...)
{
    uint64_t now = be_now_ms();
    if (now - lg->window_ms >= 1000) {
        if (lg->dropped)
            be_log_line(lg, "%u similar messages suppressed", lg->dropped);
        lg->window_ms = now;
        lg->in_window = 0;
        lg->dropped = 0;
    }
    if (lg->in_window >= BE_LOG_BURST) {
        lg->dropped++;
        return;
    }
    lg->in_window++;
    va_list ap;
    va_start(ap, fmt);
    vline(lg, fmt, ap);
    va_end(ap);
}
