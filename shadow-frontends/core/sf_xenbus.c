/* sf_xenbus.c - xenstore plumbing shared by shadow frontends. */
#define _GNU_SOURCE
#include "sf_xenbus.h"

#include "pv-keys.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xen/xen.h>

#define TOKEN_GEN "sf-gen"
#define TOKEN_BE  "sf-be-" /* followed by the epoch */

static bool valid_path(const char *p, bool absolute)
{
    size_t n = strlen(p);
    if (n == 0 || n >= SFX_PATH_MAX || (absolute && p[0] != '/') || p[n - 1] == '/' ||
        strstr(p, "//"))
        return false;
    for (const char *c = p; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '/' || *c == '_' || *c == '@'))
            return false;
    return true;
}

int sfx_open(struct sfx *x, const char *device)
{
    memset(x, 0, sizeof(*x));
    if (!valid_path(device, false) || device[0] == '@') {
        errno = EINVAL;
        return -1;
    }
    snprintf(x->fe, sizeof(x->fe), "%s", device);
    x->xs = xs_open(0);
    if (!x->xs)
        return -1;
    char path[SFX_PATH_MAX + 32];
    if (!xsu_path(path, sizeof(path), x->fe, USK_FE_GENERATION) ||
        !xs_watch(x->xs, path, TOKEN_GEN)) {
        int e = errno;
        sfx_close(x);
        errno = e;
        return -1;
    }
    return 0;
}

void sfx_close(struct sfx *x)
{
    if (!x || !x->xs)
        return;
    xs_close(x->xs);
    x->xs = NULL;
}

struct xs_handle *sfx_xs(const struct sfx *x)
{
    return x->xs;
}

int sfx_fd(const struct sfx *x)
{
    return xs_fileno(x->xs);
}

unsigned sfx_events(struct sfx *x)
{
    unsigned ev = 0;
    char be_token[32];
    snprintf(be_token, sizeof(be_token), TOKEN_BE "%u", x->be_epoch);
    char **w;
    while ((w = xs_check_watch(x->xs)) != NULL) {
        if (!strcmp(w[XS_WATCH_TOKEN], TOKEN_GEN))
            ev |= SFX_EV_GENERATION;
        else if (!strcmp(w[XS_WATCH_TOKEN], be_token))
            ev |= SFX_EV_BACKEND;
        /* events of an older backend watch are stale: dropped */
        free(w);
    }
    return ev;
}

int sfx_read_backend(struct sfx *x)
{
    char *be = xsu_read(x->xs, XBT_NULL, x->fe, PVK_BACKEND, SFX_PATH_MAX - 1);
    if (!be)
        return -1;
    uint64_t id;
    if (!valid_path(be, true) ||
        xsu_read_u64(x->xs, XBT_NULL, x->fe, PVK_BACKEND_ID, DOMID_FIRST_RESERVED - 1, &id) < 0) {
        free(be);
        if (errno != ENOENT)
            errno = EINVAL;
        return -1;
    }
    if (x->be_watched && !strcmp(be, x->be) && id == x->be_id) {
        free(be);
        return 0;
    }
    char token[32];
    if (x->be_watched) {
        snprintf(token, sizeof(token), TOKEN_BE "%u", x->be_epoch);
        xs_unwatch(x->xs, x->be, token); /* a failure leaves only stale events */
        x->be_watched = false;
    }
    snprintf(x->be, sizeof(x->be), "%s", be);
    free(be);
    x->be_id = (unsigned)id;
    x->be_epoch++;
    snprintf(token, sizeof(token), TOKEN_BE "%u", x->be_epoch);
    if (!xs_watch(x->xs, x->be, token))
        return -1;
    x->be_watched = true;
    return 1;
}

int sfx_read_generation(struct sfx *x, uint64_t *gen)
{
    return xsu_read_u64_default(x->xs, XBT_NULL, x->fe, USK_FE_GENERATION, UINT64_MAX, 0, gen);
}

int sfx_backend_state(struct sfx *x)
{
    if (!x->be[0]) {
        errno = ENOENT;
        return -1;
    }
    return xsu_read_state(x->xs, x->be);
}

int sfx_set_state(struct sfx *x, int state)
{
    return xsu_write_state(x->xs, x->fe, state);
}

int sfx_write(struct sfx *x, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = xsu_vprintf(x->xs, XBT_NULL, x->fe, key, fmt, ap);
    va_end(ap);
    return r;
}

int sfx_remove(struct sfx *x, const char *key)
{
    char path[SFX_PATH_MAX + 64];
    if (!xsu_path(path, sizeof(path), x->fe, key))
        return -1;
    if (!xs_rm(x->xs, XBT_NULL, path) && errno != ENOENT)
        return -1;
    return 0;
}
