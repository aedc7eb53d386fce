/* xs_util.c - checked helpers over libxenstore. */
#define _GNU_SOURCE
#include "xs_util.h"

#include "pv-keys.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *xsu_path(char *buf, size_t len, const char *dir, const char *key)
{
    int n = key ? snprintf(buf, len, "%s/%s", dir, key) : snprintf(buf, len, "%s", dir);
    if (n < 0 || (size_t)n >= len) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return buf;
}

char *xsu_read(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
               size_t max)
{
    char path[1024];
    if (!xsu_path(path, sizeof(path), dir, key))
        return NULL;
    unsigned len = 0;
    char *v = xs_read(xs, t, path, &len);
    if (!v)
        return NULL;
    if (len > max || strlen(v) != len) { /* too long, or embedded NUL */
        free(v);
        errno = len > max ? EFBIG : EINVAL;
        return NULL;
    }
    return v;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (!*s || *s < '0' || *s > '9') {
        errno = EINVAL;
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end) {
        errno = EINVAL;
        return -1;
    }
    if (errno == ERANGE || v > max) {
        errno = ERANGE;
        return -1;
    }
    *out = v;
    return 0;
}

int xsu_read_u64(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
                 uint64_t max, uint64_t *out)
{
    char *v = xsu_read(xs, t, dir, key, 32);
    if (!v)
        return -1;
    int r = parse_u64(v, max, out);
    int e = errno;
    free(v);
    errno = e;
    return r;
}

int xsu_read_u64_default(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
                         uint64_t max, uint64_t dflt, uint64_t *out)
{
    if (xsu_read_u64(xs, t, dir, key, max, out) == 0)
        return 0;
    if (errno != ENOENT)
        return -1;
    *out = dflt;
    return 0;
}

int xsu_vprintf(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
                const char *fmt, va_list ap)
{
    char path[1024], val[2048];
    if (!xsu_path(path, sizeof(path), dir, key))
        return -1;
    int n = vsnprintf(val, sizeof(val), fmt, ap);
    if (n < 0 || (size_t)n >= sizeof(val)) {
        errno = EFBIG;
        return -1;
    }
    return xs_write(xs, t, path, val, (unsigned)n) ? 0 : -1;
}

int xsu_printf(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = xsu_vprintf(xs, t, dir, key, fmt, ap);
    va_end(ap);
    return r;
}

int xsu_read_state(struct xs_handle *xs, const char *dir)
{
    uint64_t v;
    if (xsu_read_u64(xs, XBT_NULL, dir, PVK_STATE, 7, &v) < 0)
        return -1;
    return (int)v;
}

int xsu_write_state(struct xs_handle *xs, const char *dir, int state)
{
    if (xsu_read_state(xs, dir) == state)
        return 0;
    return xsu_printf(xs, XBT_NULL, dir, PVK_STATE, "%d", state);
}

const char *xsu_state_name(int state)
{
    static const char *const names[] = {"Unknown",   "Initialising", "InitWait", "Initialised",
                                        "Connected", "Closing",      "Closed",   "Reconfiguring"};
    return state >= 0 && state < 8 ? names[state] : "invalid";
}
