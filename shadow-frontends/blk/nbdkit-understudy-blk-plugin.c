/* nbdkit-understudy-blk-plugin.c - the shadow blkfront as an nbdkit
 * plugin: exports a Xen PV disk (a blkif frontend in this domain) as NBD.
 *
 *   nbdkit understudy-blk device=device/vbd/51712 [deadline-ms=N]
 *          [max-held=N] [max-retained-mib=N] [max-grants=N]
 *          [max-ring-page-order=N] [max-indirect-segments=N]
 *          [connect-timeout-ms=N] [shadow=off|restart]
 *
 * Requests reach the frontend's engine thread and block there through a
 * backend recovery. Thread model: parallel. */
#define _GNU_SOURCE
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "blk_frontend.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

static struct blkfe_config cfg;
static char *device;
static struct blkfe *fe;

static void ubf_log(enum sf_log_level level, const char *line)
{
    if (level == SF_LOG_ERR)
        nbdkit_error("%s", line);
    else
        nbdkit_debug("%s", line);
}

static void ubf_load(void)
{
    blkfe_defaults(&cfg);
    cfg.log = ubf_log;
}

static void ubf_unload(void)
{
    blkfe_close(fe);
    fe = NULL;
    free(device);
    device = NULL;
}

static int ubf_config(const char *key, const char *value)
{
    struct {
        const char *key;
        unsigned *out;
    } nums[] = {
        {"deadline-ms", &cfg.deadline_ms},
        {"max-held", &cfg.max_held},
        {"max-retained-mib", &cfg.max_retained_mib},
        {"max-grants", &cfg.max_grants},
        {"max-ring-page-order", &cfg.max_ring_order},
        {"max-indirect-segments", &cfg.max_indirect},
        {"connect-timeout-ms", &cfg.connect_timeout_ms},
    };
    if (!strcmp(key, "device")) {
        free(device);
        device = strdup(value);
        if (!device) {
            nbdkit_error("strdup: %m");
            return -1;
        }
        cfg.device = device;
        return 0;
    }
    if (!strcmp(key, "shadow")) {
        cfg.restart_only = !strcmp(value, "restart");
        if (cfg.restart_only) {
            cfg.shadow = false;
            return 0;
        }
        int on = nbdkit_parse_bool(value);
        if (on < 0)
            return -1;
        cfg.shadow = on;
        return 0;
    }
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
        if (!strcmp(key, nums[i].key))
            return nbdkit_parse_unsigned(key, value, nums[i].out);
    nbdkit_error("unknown parameter '%s'", key);
    return -1;
}

static int ubf_config_complete(void)
{
    if (!device) {
        nbdkit_error("the device parameter is required (e.g. device=device/vbd/51712)");
        return -1;
    }
    if (!cfg.deadline_ms || !cfg.max_held) {
        nbdkit_error("deadline-ms and max-held must be positive");
        return -1;
    }
    /* Write data is copied into buffers of up to 256 KiB, held until the
     * backend acknowledged it and a flush made it durable (up to
     * max-retained-mib), then freed. With glibc's defaults each such buffer
     * came from a heap grown and trimmed again, or a fresh mapping: every
     * page faulted in anew, which cost more CPU than the copy itself (perf on
     * xensim, bench/README.md "Disk"). Keep that much memory for reuse. */
    size_t keep = ((size_t)cfg.max_retained_mib + 32u) << 20;
    if (keep > INT_MAX)
        keep = INT_MAX; /* mallopt takes an int */
    if (!mallopt(M_MMAP_THRESHOLD, 1 << 20) || !mallopt(M_TRIM_THRESHOLD, (int)keep))
        nbdkit_debug("mallopt: glibc's defaults kept (write copies are faulted in anew)");
    return 0;
}

#define ubf_config_help                                                                            \
    "device=<DIR>              (required) the frontend dir, e.g. device/vbd/51712\n"               \
    "deadline-ms=<N>           a request outstanding this long means a hung backend\n"             \
    "max-held=<N>              requests held during a recovery before callers block\n"             \
    "max-retained-mib=<N>      unflushed acknowledged writes kept before forcing a flush\n"        \
    "max-grants=<N>            grant budget of a connection (ring, indirect and data pages)\n"     \
    "max-ring-page-order=<N>   largest ring to use (2^N pages)\n"                                  \
    "max-indirect-segments=<N> largest indirect request\n"                                         \
    "connect-timeout-ms=<N>    how long to wait for the first connection (0: forever)\n"           \
    "shadow=off                for benchmarks only: no retention of acknowledged writes, no\n"     \
    "                          private copies (a dying volatile cache then loses writes)\n"        \
    "shadow=restart            restart only (the application table's restart column): at a\n"      \
    "                          fault outstanding requests fail with EIO, nothing is replayed"

/* The frontend runs a thread: start it after nbdkit forked. */
static int ubf_after_fork(void)
{
    if (cfg.restart_only)
        nbdkit_debug("shadow=restart: restart only - at a fault outstanding requests fail "
                     "with EIO, nothing is retained or replayed");
    else if (!cfg.shadow)
        nbdkit_debug("shadow=off: acknowledged writes are not retained (benchmark mode)");
    fe = blkfe_open(&cfg);
    return fe ? 0 : -1;
}

static void *ubf_open(int readonly)
{
    (void)readonly;
    return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t ubf_get_size(void *h)
{
    (void)h;
    return (int64_t)blkfe_size(fe);
}

static int ubf_block_size(void *h, uint32_t *minimum, uint32_t *preferred, uint32_t *maximum)
{
    (void)h;
    uint32_t ss = blkfe_sector_size(fe);
    *minimum = ss;
    *preferred = ss > 4096 ? ss : 4096;
    *maximum = 32u * 1024 * 1024;
    return 0;
}

static int ubf_can_write(void *h)
{
    (void)h;
    return !blkfe_readonly(fe);
}

static int ubf_can_flush(void *h)
{
    (void)h;
    return 1;
}

static int ubf_can_trim(void *h)
{
    (void)h;
    return blkfe_can_trim(fe);
}

static int ubf_can_fua(void *h)
{
    (void)h;
    return NBDKIT_FUA_EMULATE;
}

static int ubf_can_multi_conn(void *h)
{
    (void)h;
    return 1; /* one journal for all connections: a flush covers them all */
}

static int ubf_is_rotational(void *h)
{
    (void)h;
    return 0;
}

static int result(int err)
{
    if (!err)
        return 0;
    nbdkit_set_error(err);
    return -1;
}

static int ubf_pread(void *h, void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{
    (void)h;
    (void)flags;
    int err = blkfe_pread(fe, buf, count, offset);
    if (err)
        nbdkit_error("pread %u bytes at %" PRIu64 ": %s", count, offset, strerror(err));
    return result(err);
}

static int ubf_pwrite(void *h, const void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{
    (void)h;
    (void)flags; /* FUA is emulated by nbdkit with a flush */
    int err = blkfe_pwrite(fe, buf, count, offset);
    if (err)
        nbdkit_error("pwrite %u bytes at %" PRIu64 ": %s", count, offset, strerror(err));
    return result(err);
}

static int ubf_flush(void *h, uint32_t flags)
{
    (void)h;
    (void)flags;
    int err = blkfe_flush(fe);
    if (err)
        nbdkit_error("flush: %s", strerror(err));
    return result(err);
}

static int ubf_trim(void *h, uint32_t count, uint64_t offset, uint32_t flags)
{
    (void)h;
    (void)flags;
    int err = blkfe_trim(fe, count, offset);
    if (err)
        nbdkit_error("trim %u bytes at %" PRIu64 ": %s", count, offset, strerror(err));
    return result(err);
}

static struct nbdkit_plugin plugin = {
    .name = "understudy-blk",
    .longname = "Understudy shadow blkfront",
    .description = "A Xen blkif frontend that survives driver-domain crashes, as NBD",
    .load = ubf_load,
    .unload = ubf_unload,
    .config = ubf_config,
    .config_complete = ubf_config_complete,
    .config_help = ubf_config_help,
    .magic_config_key = "device",
    .after_fork = ubf_after_fork,
    .open = ubf_open,
    .get_size = ubf_get_size,
    .block_size = ubf_block_size,
    .can_write = ubf_can_write,
    .can_flush = ubf_can_flush,
    .can_trim = ubf_can_trim,
    .can_fua = ubf_can_fua,
    .can_multi_conn = ubf_can_multi_conn,
    .is_rotational = ubf_is_rotational,
    .pread = ubf_pread,
    .pwrite = ubf_pwrite,
    .flush = ubf_flush,
    .trim = ubf_trim,
    .errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN(plugin)
