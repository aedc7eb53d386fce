/* blkback - Understudy's userspace blkif backend: one process per virtual
 * block device, in a driver domain.
 *
 *   blkback --backend /local/domain/<self>/backend/vbd/<fe-domid>/<devid> [--io auto|uring|sync]
 *
 * The xenbus state machine, rings and event loop are the backend core's
 * (backends/core); this file is the class's ops table. Design:
 * backends/README.md.
 */
#define _GNU_SOURCE
#include "bb.h"

#include "pv-keys.h"
#include "understudy-keys.h"

#include <errno.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bb_setup(struct be_dev *be)
{
    struct bb_dev *d = be_priv(be);
    d->be = be;
    if (bb_config_read(d) < 0 || bb_disk_open(d) < 0)
        return -1;
    if (d->cfg.cache == BB_CACHE_VOLATILE && !d->vc) {
        d->vc = bb_vcache_new();
        if (!d->vc) {
            be_error(be, ENOMEM, "out of memory for the volatile cache");
            return -1;
        }
    }
    BE_LOG(be, "%s: %llu sectors, %s, cache %s%s", d->cfg.path, (unsigned long long)d->disk.sectors,
           d->cfg.readonly ? "read-only" : "read-write",
           d->cfg.cache == BB_CACHE_NONE
               ? (d->disk.fd_direct >= 0 ? "none (O_DIRECT)" : "none (page cache)")
           : d->cfg.cache == BB_CACHE_WRITEBACK ? "writeback"
                                                : "volatile",
           d->cfg.discard_enable ? "" : ", discard disabled");
    return 0;
}

static void bb_teardown(struct be_dev *be)
{
    struct bb_dev *d = be_priv(be);
    if (d->vc && d->disk.fd >= 0) {
        /* A clean stop: the disk's volatile cache is written back, as at power-off. */
        size_t held = bb_vcache_held(d->vc);
        if (held && (bb_vcache_writeback(d->vc, d->disk.fd) < 0 || fdatasync(d->disk.fd) < 0))
            BE_LOG(be, "writing back %zu held bytes to %s: %m", held, d->cfg.path);
    }
    bb_vcache_free(d->vc);
    d->vc = NULL;
    bb_disk_close(&d->disk);
    bb_config_clear(&d->cfg);
}

static const char *const bb_config_keys[] = {PVK_BLK_PARAMS, PVK_BLK_MODE, USK_BE_CACHE,
                                             PVK_BLK_DISCARD_ENABLE, NULL};

static const struct be_class_ops bb_ops = {
    .size = sizeof(struct be_class_ops),
    .prog = "blkback",
    .type = "vbd",
    .config_keys = bb_config_keys,
    .setup = bb_setup,
    .publish = bb_publish,
    .connect = bb_connect,
    .disconnect = bb_disconnect,
    .teardown = bb_teardown,
    .corrupt = bb_corrupt,
};

int main(int argc, char **argv)
{
    static struct bb_dev dev = {.disk = {.fd = -1, .fd_direct = -1}, .io_choice = "auto"};
    /* --io is ours; the core parses the rest. */
    char **args = calloc((size_t)argc + 1, sizeof(*args));
    if (!args) {
        fprintf(stderr, "blkback: out of memory\n");
        return 1;
    }
    int n = 0;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        if (!strcmp(argv[i], "--io") && i + 1 < argc)
            v = argv[++i];
        else if (!strncmp(argv[i], "--io=", 5))
            v = argv[i] + 5;
        if (!v) {
            args[n++] = argv[i];
            continue;
        }
        if (strcmp(v, "auto") && strcmp(v, "uring") && strcmp(v, "sync")) {
            fprintf(stderr, "blkback: --io %s: not auto, uring or sync\n", v);
            free(args);
            return 2;
        }
        dev.io_choice = v;
    }
    int rc = be_main(&bb_ops, &dev, n, args);
    free(args);
    return rc;
}
