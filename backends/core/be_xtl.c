/* be_xtl.c - the logger the core hands Xen's libraries (xengnttab_open,
 * xenevtchn_open). Without one, they print each failure to stderr
 * themselves, and a frontend's bad grant refs make failures at will (a map
 * batch with one bad ref fails once per halving, blk/bb_pgrant.c). So their
 * lines carry the device's tag and go through a rate limiter of their own,
 * apart from the class's, so that they cannot crowd out the class's lines.
 */
#define _GNU_SOURCE
#include "be_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void xtl_vmessage(struct xentoollog_logger *l, xentoollog_level level, int errnoval,
                         const char *context, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));

static void xtl_vmessage(struct xentoollog_logger *l, xentoollog_level level, int errnoval,
                         const char *context, const char *fmt, va_list ap)
{
    struct be_xtl *x = (struct be_xtl *)l; /* l is its first member */
    if (level < XTL_PROGRESS)              /* what the libraries' own logger leaves out */
        return;
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    be_log_limited(&x->lg, "%s: %s%s%s", context ? context : "xen", msg, errnoval > 0 ? ": " : "",
                   errnoval > 0 ? strerror(errnoval) : "");
}

struct xentoollog_logger *be_xtl_init(struct be_dev *be)
{
    be->xtl.xtl.vmessage = xtl_vmessage;
    be->xtl.xtl.progress = NULL;
    be->xtl.xtl.destroy = NULL; /* the libraries never destroy a logger they were given */
    be->xtl.lg = be->log;
    be->xtl.lg.window_ms = 0;
    be->xtl.lg.in_window = 0;
    be->xtl.lg.dropped = 0;
    return &be->xtl.xtl;
}
