/* blk_frontend.h - the shadow blkfront as a library: one disk, served by
 * the engine (core/) over the blkif class. The nbdkit plugin and the test
 * driver are thin callers of this API. Every call may block through a
 * recovery; none fails because of one. Thread-safe. */
#ifndef BLK_FRONTEND_H
#define BLK_FRONTEND_H

#include "sf_engine.h"

#include <stdbool.h>
#include <stdint.h>

struct blkfe_config {
    const char *device;          /* e.g. device/vbd/51712, relative to the domain home */
    unsigned deadline_ms;        /* default 5000 */
    unsigned max_held;           /* default 256 */
    unsigned max_retained_mib;   /* default 64 */
    unsigned max_grants;         /* default 216: one connection's ring and pages */
    unsigned max_ring_order;     /* default 2 */
    unsigned max_indirect;       /* default 64 */
    unsigned connect_timeout_ms; /* default 60000; 0: wait forever */
    /* default true. false ("shadow=off", for measuring the shadow's cost):
     * acknowledged writes are not retained and writes are not copied (the
     * caller's buffer is used while it waits), as a plain blkfront keeps
     * only its in-flight requests. Not crash-safe over a volatile cache. */
    bool shadow;
    /* default false. true ("shadow=restart", the application table's
     * restart column): what a stock blkfront that restarts with its backend
     * gives - at a fault every outstanding request fails with EIO, requests
     * made while there is no backend fail at once, a new backend serves new
     * requests; nothing retained or replayed (sf_engine_config.restart_only). */
    bool restart_only;
    void (*log)(enum sf_log_level level, const char *line);
};

/* Defaults into cfg (device and log left alone). */
void blkfe_defaults(struct blkfe_config *cfg);

struct blkfe;

/* Start the frontend and wait for the first connection. NULL on failure,
 * logged through cfg->log. */
struct blkfe *blkfe_open(const struct blkfe_config *cfg);
void blkfe_close(struct blkfe *fe);

uint64_t blkfe_size(const struct blkfe *fe);        /* bytes */
uint32_t blkfe_sector_size(const struct blkfe *fe); /* the logical block size */
bool blkfe_can_trim(const struct blkfe *fe);
bool blkfe_readonly(const struct blkfe *fe);
enum sf_state blkfe_state(struct blkfe *fe);
uint64_t blkfe_recoveries(struct blkfe *fe);

/* 0 or an errno value. Offsets and counts must be multiples of the sector
 * size (EINVAL otherwise) and inside the disk. */
int blkfe_pread(struct blkfe *fe, void *buf, uint32_t count, uint64_t off);
int blkfe_pwrite(struct blkfe *fe, const void *buf, uint32_t count, uint64_t off);
int blkfe_flush(struct blkfe *fe);
int blkfe_trim(struct blkfe *fe, uint32_t count, uint64_t off);

#endif
