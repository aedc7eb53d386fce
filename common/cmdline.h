/* cmdline.h - what the guest's frontend daemons (understudy-netfront,
 * understudy-sndfront) do alike before their loop: a number from the command
 * line, strictly, and the signals they stop on, as an fd for the loop. */
#ifndef UNDERSTUDY_CMDLINE_H
#define UNDERSTUDY_CMDLINE_H

#include <stdbool.h>

/* s as a decimal in [lo, hi]: no sign, no spaces, nothing after it. 0 or -1. */
int cmdline_uint(const char *s, unsigned lo, unsigned hi, unsigned *out);

/* s as on or off, into *out. 0, or -1 after a line on stderr naming prog
 * and the option (e.g. "understudy-netfront: --shadow 'x': want on or off"). */
int cmdline_onoff(const char *prog, const char *opt, const char *s, bool *out);

/* SIGTERM and SIGINT blocked and readable from the returned signalfd
 * (non-blocking, close-on-exec); SIGPIPE ignored (a peer that went away is
 * an error of the write, not a death). -1 with errno. */
int cmdline_stop_signals(void);

#endif
