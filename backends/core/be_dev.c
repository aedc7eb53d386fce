/* be_dev.c - the device object's accessors, error reporting and the
 * frontend's number keys. */
#define _GNU_SOURCE
#include "be_internal.h"

#include "pv-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <xen/io/xenbus.h>

void *be_priv(struct be_dev *be)
{
    return be->priv;
}

struct xs_handle *be_xs(struct be_dev *be)
{
    return be->xs;
}

xengnttab_handle *be_gnttab(struct be_dev *be)
{
    return be->gt;
}

struct be_loop *be_loop_of(struct be_dev *be)
{
    return be->loop;
}

struct be_log *be_logger(struct be_dev *be)
{
    return &be->log;
}

const char *be_path(struct be_dev *be)
{
    return be->path;
}

const char *be_fe_path(struct be_dev *be)
{
    return be->fe_path;
}

unsigned be_fe_domid(struct be_dev *be)
{
    return be->fe_domid;
}

unsigned be_devid(struct be_dev *be)
{
    return be->devid;
}

static void verror(struct be_dev *be, int err, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    BE_LOG(be, "error: %s", msg);
    be->error_maybe = true;
    if (xsu_printf(be->xs, XBT_NULL, be->path, PVK_ERROR, "%d %s", err, msg) < 0)
        BE_LOG(be, "writing %s/error: %s", be->path, strerror(errno));
}

void be_error(struct be_dev *be, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(be, err, fmt, ap);
    va_end(ap);
}

void be_fail(struct be_dev *be, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(be, err, fmt, ap);
    va_end(ap);
    be_write_state(be, XenbusStateClosing);
}

int be_read_fe_u64(struct be_dev *be, const char *key, uint64_t max, uint64_t dflt, uint64_t *out)
{
    if (xsu_read_u64_default(be->xs, XBT_NULL, be->fe_path, key, max, dflt, out) == 0)
        return 0;
    be_error(be, errno, "frontend %s/%s: %s (at most %llu)", be->fe_path, key,
             errno == ERANGE ? "out of range" : strerror(errno), (unsigned long long)max);
    return -1;
}
