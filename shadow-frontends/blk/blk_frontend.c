/* blk_frontend.c - requests in, journal entries out. */
#define _GNU_SOURCE
#include "blk_frontend.h"

#include "blk_class.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Callers' requests are cut into entries of at most this much; the engine
 * cuts further to what the connection carries. */
#define CHUNK (256u * 1024u)

struct blkfe {
    struct blk_class *cls;
    struct sf_engine *eng;
    uint64_t size;
    uint32_t sector_size;
    bool copy_writes; /* the shadow keeps a private copy (it may outlive the call) */
};

void blkfe_defaults(struct blkfe_config *cfg)
{
    cfg->deadline_ms = 5000;
    cfg->max_held = 256;
    cfg->max_retained_mib = 64;
    /* With a hot standby's ring and prefill (blk_class.c) 252 grants: what
     * gntalloc's default limit (1024) leaves beside a NIC with its own
     * standby (772). README.md, "The disk's hot standby". */
    cfg->max_grants = 216;
    cfg->max_ring_order = 2;
    cfg->max_indirect = 64;
    cfg->connect_timeout_ms = 60000;
    cfg->shadow = true;
}

static void cfg_sink(void *arg, enum sf_log_level level, const char *msg)
{
    const struct blkfe_config *cfg = arg;
    if (cfg->log)
        cfg->log(level, msg);
}

static void say(const struct blkfe_config *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct blkfe_config *cfg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sf_vlogf(cfg_sink, (void *)cfg, SF_LOG_ERR, fmt, ap);
    va_end(ap);
}

/* The blkif handle is the device id: the last component of the dir. */
static uint16_t device_handle(const char *device)
{
    const char *b = strrchr(device, '/');
    b = b ? b + 1 : device;
    char *end;
    unsigned long v = strtoul(b, &end, 10);
    return (*b && !*end && v <= 0xffff) ? (uint16_t)v : 0;
}

struct blkfe *blkfe_open(const struct blkfe_config *cfg)
{
    struct blkfe *fe = calloc(1, sizeof(*fe));
    if (!fe) {
        say(cfg, "%s: calloc: %m", cfg->device);
        return NULL;
    }
    struct blk_class_config cc = {.max_ring_order = cfg->max_ring_order,
                                  .max_grants = cfg->max_grants,
                                  .max_indirect = cfg->max_indirect};
    const char *why = "";
    fe->cls = blk_class_new(&cc, device_handle(cfg->device), &why);
    if (!fe->cls) {
        say(cfg, "%s: %s: %m", cfg->device, why);
        goto fail;
    }
    struct sf_engine_config ec = {.device = cfg->device,
                                  .deadline_ms = cfg->deadline_ms,
                                  .max_held = cfg->max_held,
                                  .max_retained = (uint64_t)cfg->max_retained_mib << 20,
                                  .connect_timeout_ms = cfg->connect_timeout_ms,
                                  .no_retain = !cfg->shadow,
                                  .restart_only = cfg->restart_only,
                                  .log = cfg->log};
    fe->copy_writes = cfg->shadow && !cfg->restart_only;
    if (sf_engine_new(&blk_class_ops, fe->cls, &ec, &fe->eng) < 0) {
        say(cfg, "%s: engine: %m", cfg->device);
        goto fail;
    }
    blk_class_set_engine(fe->cls, fe->eng);
    if (sf_engine_start(fe->eng) < 0) {
        say(cfg, "%s: no usable backend connection: %m", cfg->device);
        goto fail;
    }
    fe->size = blk_class_size(fe->cls);
    fe->sector_size = blk_class_sector_size(fe->cls);
    return fe;
fail:
    blkfe_close(fe);
    return NULL;
}

void blkfe_close(struct blkfe *fe)
{
    if (!fe)
        return;
    sf_engine_free(fe->eng); /* stops the thread before the class goes */
    blk_class_free(fe->cls);
    free(fe);
}

uint64_t blkfe_size(const struct blkfe *fe)
{
    return fe->size;
}

uint32_t blkfe_sector_size(const struct blkfe *fe)
{
    return fe->sector_size;
}

bool blkfe_can_trim(const struct blkfe *fe)
{
    return blk_class_can_trim(fe->cls);
}

bool blkfe_readonly(const struct blkfe *fe)
{
    return blk_class_readonly(fe->cls);
}

enum sf_state blkfe_state(struct blkfe *fe)
{
    return sf_engine_state(fe->eng);
}

uint64_t blkfe_recoveries(struct blkfe *fe)
{
    return sf_engine_recoveries(fe->eng);
}

static int check_range(const struct blkfe *fe, uint64_t count, uint64_t off)
{
    if (!count || count % fe->sector_size || off % fe->sector_size || off > fe->size ||
        count > fe->size - off)
        return EINVAL;
    return 0;
}

static void free_list(struct sf_link *list)
{
    while (!sf_list_empty(list)) {
        struct sfj_entry *e = SF_CONTAINER(list->next, struct sfj_entry, q);
        sf_list_del(&e->q);
        sfj_entry_free(e);
    }
}

/* Cut [off, off+count) into entries of op; writes get a private copy, except
 * without the shadow: then nothing keeps an entry past this call, which
 * waits for all of them, so the caller's buffer serves. */
static int run_data(struct blkfe *fe, uint32_t op, const void *wbuf, void *rbuf, uint32_t count,
                    uint64_t off)
{
    int err = check_range(fe, count, off);
    if (err)
        return err;
    struct sf_link list;
    sf_list_init(&list);
    for (uint32_t done = 0; done < count;) {
        uint32_t n = count - done < CHUNK ? count - done : CHUNK;
        uint32_t flags = SFJ_DATA | (op == BLK_WRITE ? SFJ_MODIFIES : 0);
        struct sfj_entry *e = sfj_entry_new(flags, op, off + done, n);
        if (!e)
            goto nomem;
        if (op == BLK_WRITE && !fe->copy_writes) {
            e->data = (void *)((const uint8_t *)wbuf + done); /* read only: issue copies it out */
        } else if (op == BLK_WRITE) {
            e->data = malloc(n);
            if (!e->data) {
                free(e);
                goto nomem;
            }
            memcpy(e->data, (const uint8_t *)wbuf + done, n);
            e->data_owned = true;
        } else {
            e->data = (uint8_t *)rbuf + done;
        }
        sf_list_append(&list, &e->q);
        done += n;
    }
    return sf_engine_run(fe->eng, &list);
nomem:
    free_list(&list);
    return ENOMEM;
}

int blkfe_pread(struct blkfe *fe, void *buf, uint32_t count, uint64_t off)
{
    return run_data(fe, BLK_READ, NULL, buf, count, off);
}

int blkfe_pwrite(struct blkfe *fe, const void *buf, uint32_t count, uint64_t off)
{
    return run_data(fe, BLK_WRITE, buf, NULL, count, off);
}

static int run_one(struct blkfe *fe, uint32_t flags, uint32_t op, uint64_t start, uint64_t len)
{
    struct sf_link list;
    sf_list_init(&list);
    struct sfj_entry *e = sfj_entry_new(flags, op, start, len);
    if (!e)
        return ENOMEM;
    sf_list_append(&list, &e->q);
    return sf_engine_run(fe->eng, &list);
}

int blkfe_flush(struct blkfe *fe)
{
    return run_one(fe, SFJ_FLUSH, BLK_FLUSH, 0, 0);
}

int blkfe_trim(struct blkfe *fe, uint32_t count, uint64_t off)
{
    int err = check_range(fe, count, off);
    if (err)
        return err;
    return run_one(fe, SFJ_MODIFIES, BLK_DISCARD, off, count);
}
