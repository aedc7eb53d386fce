/* sf_log.c - log line formatting. */
#define _GNU_SOURCE
#include "sf_log.h"

#include <errno.h>
#include <stdio.h>

void sf_vlogf(sf_log_sink *sink, void *arg, enum sf_log_level level, const char *fmt, va_list ap)
{
    if (!sink)
        return;
    int saved = errno; /* the sink may change it; %m was already expanded */
    char msg[768];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    sink(arg, level, msg);
    errno = saved;
}

void sf_logf(sf_log_sink *sink, void *arg, enum sf_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sf_vlogf(sink, arg, level, fmt, ap);
    va_end(ap);
}
