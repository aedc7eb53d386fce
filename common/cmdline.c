/* cmdline.c - see cmdline.h. */
#define _GNU_SOURCE
#include "cmdline.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>

int cmdline_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] < '0' || s[0] > '9' || v < lo || v > hi)
        return -1;
    *out = (unsigned)v;
    return 0;
}

int cmdline_onoff(const char *prog, const char *opt, const char *s, bool *out)
{
    if (strcmp(s, "on") && strcmp(s, "off")) {
        fprintf(stderr, "%s: %s '%s': want on or off\n", prog, opt, s);
        return -1;
    }
    *out = !strcmp(s, "on");
    return 0;
}

int cmdline_stop_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
        return -1;
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}
