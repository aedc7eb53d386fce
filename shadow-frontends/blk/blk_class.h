/* blk_class.h - the blkif device class for the shadow frontend engine:
 * turns journal entries into blkif requests on a shared ring (direct or
 * indirect segments over a pool of persistently granted pages), validates
 * responses, and checks on every reconnect that the disk is the same one. */
#ifndef BLK_CLASS_H
#define BLK_CLASS_H

#include "blk_xenbus.h"
#include "sf_engine.h"

#include <stdbool.h>
#include <stdint.h>

/* Journal op codes of this class (the entry's op). */
enum blk_op {
    BLK_READ = 1,
    BLK_WRITE,
    BLK_FLUSH,
    BLK_DISCARD,
};

struct blk_class_config {
    unsigned max_ring_order; /* at most this ring order, whatever the backend offers */
    unsigned max_grants;     /* grant budget: ring + indirect + data pages */
    unsigned max_indirect;   /* segments per indirect request, at most */
};

struct blk_class;

extern const struct sf_class_ops blk_class_ops;

/* handle: the blkif vdev handle (the device id). NULL on failure (errno),
 * with *why naming the call that failed. */
struct blk_class *blk_class_new(const struct blk_class_config *cfg, uint16_t handle,
                                const char **why);
void blk_class_free(struct blk_class *c);
/* The engine logs for the class. */
void blk_class_set_engine(struct blk_class *c, struct sf_engine *eng);

/* The device as first connected (stable afterwards: a change fails it). */
uint64_t blk_class_size(const struct blk_class *c);
uint32_t blk_class_sector_size(const struct blk_class *c);
bool blk_class_can_trim(const struct blk_class *c);
bool blk_class_readonly(const struct blk_class *c);

#endif
