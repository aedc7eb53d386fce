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
#define TOKEN_SB  "sf-standby"
#define TOKEN_FEN "sf-fenced"
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

int sfx_open_link(struct sfx *x, const char *slot_dir)
{
    memset(x, 0, sizeof(*x));
    if (!valid_path(slot_dir, false) || slot_dir[0] == '@') {
        errno = EINVAL;
        return -1;
    }
    snprintf(x->dev, sizeof(x->dev), "%s", slot_dir);
    snprintf(x->fe, sizeof(x->fe), "%s", slot_dir);
    x->xs = xs_open(0);
    return x->xs ? 0 : -1;
}

int sfx_open(struct sfx *x, const char *device)
{
    if (sfx_open_link(x, device) < 0)
        return -1;
    char gen[SFX_PATH_MAX + 32], sb[SFX_PATH_MAX + 32], fen[SFX_PATH_MAX + 32];
    if (!xsu_path(gen, sizeof(gen), x->dev, USK_FE_GENERATION) ||
        !xsu_path(sb, sizeof(sb), x->dev, USK_FE_STANDBY) ||
        !xsu_path(fen, sizeof(fen), x->dev, USK_FE_FENCED) || !xs_watch(x->xs, gen, TOKEN_GEN) ||
        !xs_watch(x->xs, sb, TOKEN_SB) || !xs_watch(x->xs, fen, TOKEN_FEN)) {
        int e = errno;
        sfx_close(x);
        errno = e;
        return -1;
    }
    return 0;
}

void sfx_set_link_dir(struct sfx *x, const char *fe)
{
    snprintf(x->fe, sizeof(x->fe), "%s", fe);
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
        else if (!strcmp(w[XS_WATCH_TOKEN], TOKEN_SB))
            ev |= SFX_EV_STANDBY;
        else if (!strcmp(w[XS_WATCH_TOKEN], TOKEN_FEN))
            ev |= SFX_EV_FENCED;
        else if (!strcmp(w[XS_WATCH_TOKEN], be_token))
            ev |= SFX_EV_BACKEND;
        /* events of an older backend watch are stale: dropped */
        free(w);
    }
    return ev;
}

int sfx_peek_backend_path(struct sfx *x, char *out, size_t len)
{
    char *be = xsu_read(x->xs, XBT_NULL, x->dev, PVK_BACKEND, SFX_PATH_MAX - 1);
    if (!be)
        return -1;
    bool ok = valid_path(be, true);
    if (ok)
        snprintf(out, len, "%s", be);
    free(be);
    if (!ok)
        errno = EINVAL;
    return ok ? 0 : -1;
}

int sfx_peek_backend(struct sfx *x, char *out, size_t len, unsigned *be_id)
{
    uint64_t id;
    if (sfx_peek_backend_path(x, out, len) < 0)
        return -1;
    if (xsu_read_u64(x->xs, XBT_NULL, x->dev, PVK_BACKEND_ID, DOMID_FIRST_RESERVED - 1, &id) < 0) {
        if (errno != ENOENT)
            errno = EINVAL;
        return -1;
    }
    *be_id = (unsigned)id;
    return 0;
}

int sfx_read_standby(struct sfx *x, char *slot, size_t len)
{
    char *v = xsu_read(x->xs, XBT_NULL, x->dev, USK_FE_STANDBY, 16);
    if (!v)
        return -1;
    bool ok = !strcmp(v, USK_FE_SLOT_A) || !strcmp(v, USK_FE_SLOT_B);
    if (ok)
        snprintf(slot, len, "%s", v);
    free(v);
    if (!ok)
        errno = EINVAL;
    return ok ? 0 : -1;
}

void sfx_name_backend(struct sfx *x, const char *be, unsigned be_id)
{
    if (x->be_watched && !x->be_unwatch[0]) {
        snprintf(x->be_unwatch, sizeof(x->be_unwatch), "%s", x->be);
        x->unwatch_epoch = x->be_epoch;
    }
    x->be_watched = false;
    x->be_epoch++;
    snprintf(x->be, sizeof(x->be), "%s", be);
    x->be_id = be_id;
}

int sfx_read_backend(struct sfx *x)
{
    char be[SFX_PATH_MAX];
    unsigned id;
    if (sfx_peek_backend(x, be, sizeof(be), &id) < 0)
        return -1;
    if (!x->be_watched || strcmp(be, x->be) || id != x->be_id)
        sfx_name_backend(x, be, id);
    char token[32];
    if (x->be_unwatch[0]) {
        snprintf(token, sizeof(token), TOKEN_BE "%u", x->unwatch_epoch);
        xs_unwatch(x->xs, x->be_unwatch, token); /* a failure leaves only stale events */
        x->be_unwatch[0] = 0;
    }
    if (x->be_watched)
        return 0;
    snprintf(token, sizeof(token), TOKEN_BE "%u", x->be_epoch);
    if (!xs_watch(x->xs, x->be, token))
        return -1;
    x->be_watched = true;
    return 1;
}

int sfx_read_generation(struct sfx *x, uint64_t *gen)
{
    return xsu_read_u64_default(x->xs, XBT_NULL, x->dev, USK_FE_GENERATION, UINT64_MAX, 0, gen);
}

int sfx_read_fenced(struct sfx *x, uint64_t *gen)
{
    return xsu_read_u64_default(x->xs, XBT_NULL, x->dev, USK_FE_FENCED, UINT64_MAX, 0, gen);
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

int sfx_write_dev(struct sfx *x, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = xsu_vprintf(x->xs, XBT_NULL, x->dev, key, fmt, ap);
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

void sfx_remove_present(struct sfx *x, const char *const *keys, size_t n)
{
    unsigned have_n = 0;
    char **have = NULL;
    if (n > 2) { /* fewer: a listing would save no round trip */
        have = xs_directory(x->xs, XBT_NULL, x->fe, &have_n);
        if (!have && errno == ENOENT)
            return; /* the dir itself is gone */
    }
    for (size_t i = 0; i < n; i++) {
        bool listed = !have;
        for (unsigned j = 0; j < have_n && !listed; j++)
            listed = !strcmp(have[j], keys[i]);
        if (listed)
            sfx_remove(x, keys[i]);
    }
    free(have);
}
