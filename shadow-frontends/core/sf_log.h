/* sf_log.h - log levels and line formatting shared by the shadow frontend
 * core and its classes. The core never writes to a terminal or a file: it
 * formats a line and hands it to the owner's sink (nbdkit's logger, the
 * netfront daemon's stderr). */
#ifndef SF_LOG_H
#define SF_LOG_H

#include <stdarg.h>

enum sf_log_level {
    SF_LOG_ERR = 0, /* a fault, a failure: the operator should know */
    SF_LOG_INFO,    /* a state change */
    SF_LOG_DEBUG,
};

/* Where formatted lines go; arg is the sink's own. */
typedef void sf_log_sink(void *arg, enum sf_log_level level, const char *msg);

/* Format (printf, %m allowed) and hand the message to sink; NULL sink: dropped. */
void sf_vlogf(sf_log_sink *sink, void *arg, enum sf_log_level level, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
void sf_logf(sf_log_sink *sink, void *arg, enum sf_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
