/* tbe - a tiny xenbus backend for shadowd's tests: just enough of the
 * handshake to show that a device was rewired and restored. Started by the
 * driverdom agent as `tbe --backend DIR`.
 *
 *  - publishes sectors (a hash of the toolstack's params: a frontend that
 *    sees other sectors after a recovery knows it got another device),
 *    feature-tbe and info, which shadowd must not record as toolstack keys;
 *  - InitWait; Connected once the frontend is Initialised with a ring-ref;
 *    back to InitWait when the frontend starts over (Initialising);
 *  - answers each FE/tfe-ping with BE/tbe-pong (the "I/O");
 *  - acts on USK_DRV_INJECT: crash aborts, hang stops answering;
 *  - exits when its backend dir goes away. */
#define _GNU_SOURCE
#include "pv-keys.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tbe[%d]: ", getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static unsigned long hash(const char *s)
{
    unsigned long h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h % 1000000 + 1;
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "--backend")) {
        fprintf(stderr, "usage: tbe --backend DIR\n");
        return 2;
    }
    const char *be = argv[2];
    struct xs_handle *xs = xs_open(0);
    if (!xs) {
        logf_("xs_open: %s", strerror(errno));
        return 1;
    }
    char *fe = xsu_read(xs, XBT_NULL, be, PVK_FRONTEND, 256);
    char *params = xsu_read(xs, XBT_NULL, be, PVK_BLK_PARAMS, 1024);
    uint64_t self;
    if (!fe || xsu_read_u64(xs, XBT_NULL, "domid", NULL, 0x7FEF, &self) < 0) {
        logf_("%s: no frontend or no domid: %s", be, strerror(errno));
        return 1;
    }
    char drv[64], inject[128];
    snprintf(drv, sizeof(drv), "/local/domain/%u", (unsigned)self);
    snprintf(inject, sizeof(inject), "%s/%s", drv, USK_DRV_INJECT);
    if (!xs_watch(xs, be, "be") || !xs_watch(xs, fe, "fe") || !xs_watch(xs, inject, "inj")) {
        logf_("watch: %s", strerror(errno));
        return 1;
    }
    logf_("serving %s for %s (params %s)", be, fe, params ? params : "(none)");
    char *seen_inject = xsu_read(xs, XBT_NULL, drv, USK_DRV_INJECT, 128);
    bool hung = false, published = false;
    for (;;) {
        /* The toolstack may still be setting the dir's permissions: retry. */
        if (!published) {
            published = xsu_printf(xs, XBT_NULL, be, PVK_BLK_SECTORS, "%lu",
                                   params ? hash(params) : 0) == 0 &&
                        xsu_printf(xs, XBT_NULL, be, "feature-tbe", "1") == 0 &&
                        xsu_printf(xs, XBT_NULL, be, PVK_BLK_INFO, "0") == 0 &&
                        xsu_printf(xs, XBT_NULL, be, "tbe-pid", "%d", getpid()) == 0 &&
                        xsu_write_state(xs, be, 2) == 0;
            if (published)
                logf_("published; InitWait");
        }
        struct pollfd p = {.fd = xs_fileno(xs), .events = POLLIN};
        if (poll(&p, 1, published ? -1 : 200) < 0 && errno != EINTR)
            break;
        char **ev;
        while ((ev = xs_check_watch(xs))) {
            free(ev);
        }
        if (errno != EAGAIN) {
            logf_("lost xenstore");
            break;
        }
        char *f = xsu_read(xs, XBT_NULL, be, PVK_FRONTEND, 256);
        if (!f) {
            logf_("%s is gone: exiting", be);
            break;
        }
        free(f);
        char *inj = xsu_read(xs, XBT_NULL, drv, USK_DRV_INJECT, 128);
        if (inj && (!seen_inject || strcmp(inj, seen_inject))) {
            logf_("inject: %s", inj);
            if (strstr(inj, " crash"))
                abort();
            if (strstr(inj, " hang"))
                hung = true;
            free(seen_inject);
            seen_inject = inj;
        } else {
            free(inj);
        }
        if (hung || !published)
            continue;
        int fs = xsu_read_state(xs, fe), bs = xsu_read_state(xs, be);
        if (fs == 1 && bs == 4) {
            logf_("frontend starts over: InitWait");
            xsu_write_state(xs, be, 2);
        } else if (fs == 3 && bs == 2) {
            char *ring = xsu_read(xs, XBT_NULL, fe, PVK_RING_REF, 32);
            if (ring) {
                logf_("frontend Initialised (ring-ref %s): Connected", ring);
                xsu_write_state(xs, be, 4);
            }
            free(ring);
        } else if ((fs == 5 || fs == 6) && bs != 6) {
            xsu_write_state(xs, be, 6);
        }
        char *ping = xsu_read(xs, XBT_NULL, fe, "tfe-ping", 32);
        char *pong = xsu_read(xs, XBT_NULL, be, "tbe-pong", 32);
        if (ping && bs == 4 && (!pong || strcmp(ping, pong)))
            xsu_printf(xs, XBT_NULL, be, "tbe-pong", "%s", ping);
        free(ping);
        free(pong);
    }
    free(seen_inject);
    free(params);
    free(fe);
    xs_close(xs);
    return 0;
}
