/* bb_config.c - the toolstack's keys in the backend dir: params, mode,
 * cache (USK_BE_CACHE) and discard-enable. Each bad value is an error the
 * operator can act on.
 */
#define _GNU_SOURCE
#include "bb.h"

#include "pv-keys.h"
#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* params as libxl writes it: a path, or "<format>:<path>" for qdisk-style disks. */
static int parse_params(struct bb_dev *d, const char *v)
{
    const char *path = v;
    const char *colon = strchr(v, ':');
    if (colon && v[0] != '/') {
        size_t n = (size_t)(colon - v);
        if ((n == 3 && !strncmp(v, "raw", 3)) || (n == 3 && !strncmp(v, "aio", 3))) {
            path = colon + 1;
        } else {
            be_error(d->be, EINVAL, "%s/params: format '%.*s' not supported (raw files only)",
                     be_path(d->be), (int)n, v);
            return -1;
        }
    }
    if (!*path) {
        be_error(d->be, EINVAL, "%s/params is empty", be_path(d->be));
        return -1;
    }
    d->cfg.path = strdup(path);
    if (!d->cfg.path) {
        be_error(d->be, ENOMEM, "out of memory");
        return -1;
    }
    return 0;
}

int bb_config_read(struct bb_dev *d)
{
    struct xs_handle *xs = be_xs(d->be);
    const char *dir = be_path(d->be);
    bb_config_clear(&d->cfg);

    char *v = xsu_read(xs, XBT_NULL, dir, PVK_BLK_PARAMS, 4095);
    if (!v) {
        be_error(d->be, errno, "reading %s/params: %s", dir, strerror(errno));
        return -1;
    }
    int r = parse_params(d, v);
    free(v);
    if (r < 0)
        return -1;

    v = xsu_read(xs, XBT_NULL, dir, PVK_BLK_MODE, 16);
    if (!v) {
        be_error(d->be, errno, "reading %s/mode: %s", dir, strerror(errno));
        return -1;
    }
    if (!strcmp(v, "r")) {
        d->cfg.readonly = true;
    } else if (!strcmp(v, "w")) {
        d->cfg.readonly = false;
    } else {
        be_error(d->be, EINVAL, "%s/mode '%s' is neither 'r' nor 'w'", dir, v);
        free(v);
        return -1;
    }
    free(v);

    v = xsu_read(xs, XBT_NULL, dir, USK_BE_CACHE, 32);
    if (!v && errno != ENOENT) {
        be_error(d->be, errno, "reading %s/%s: %s", dir, USK_BE_CACHE, strerror(errno));
        return -1;
    }
    if (!v || !strcmp(v, "none")) {
        d->cfg.cache = BB_CACHE_NONE;
    } else if (!strcmp(v, "writeback")) {
        d->cfg.cache = BB_CACHE_WRITEBACK;
    } else if (!strcmp(v, "volatile")) {
        d->cfg.cache = BB_CACHE_VOLATILE;
    } else {
        be_error(d->be, EINVAL, "%s/%s '%s' is not none, writeback or volatile", dir, USK_BE_CACHE,
                 v);
        free(v);
        return -1;
    }
    free(v);

    uint64_t de;
    if (xsu_read_u64_default(xs, XBT_NULL, dir, PVK_BLK_DISCARD_ENABLE, 1, 1, &de) < 0) {
        be_error(d->be, errno, "%s/discard-enable: not 0 or 1: %s", dir, strerror(errno));
        return -1;
    }
    d->cfg.discard_enable = de;
    return 0;
}

void bb_config_clear(struct bb_config *c)
{
    free(c->path);
    memset(c, 0, sizeof(*c));
}
