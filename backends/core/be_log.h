/* be_log.h - a backend's log lines on stderr, each prefixed with the
 * device's tag, e.g. "blkback[5/51712]: ". A rate limiter keeps a hostile
 * peer from flooding the log: at most BE_LOG_BURST lines per second, then a
 * count of what was dropped.
 */
#ifndef BE_LOG_H
#define BE_LOG_H

#include <stdint.h>

#define BE_LOG_BURST 10

struct be_log {
    char tag[64];
    uint64_t window_ms; /* start of the current one-second window */
    unsigned in_window; /* rate-limited lines logged in it */
    unsigned dropped;   /* rate-limited lines dropped since the last report */
};

/* Set the prefix: "<prog>[<fe>/<devid>]". */
void be_log_init(struct be_log *lg, const char *prog, unsigned fe, unsigned devid);
void be_log_line(struct be_log *lg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Like be_log_line, for anything a peer can trigger at will. */
void be_log_limited(struct be_log *lg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
