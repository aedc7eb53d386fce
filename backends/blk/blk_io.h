/* blk_io.h - I/O engines: io_uring, and plain preadv/pwritev when io_uring
 * is unavailable (or for cache=volatile, whose reads must see held writes
 * at the moment they complete). An engine runs reads, writes and flushes
 * on the backing store and reports each with blk_io_done(r, res), res 0
 * or -errno, never from inside submit.
 */
#ifndef BLK_IO_H
#define BLK_IO_H

#include "blk.h"

enum blk_io_op {
    BLK_IO_READ,
    BLK_IO_WRITE,
    BLK_IO_FLUSH,
};

struct blk_io_ops {
    const char *name;
    /* Queue r: op on fd, for r->iov/r->niov at byte offset off (not for flush). */
    void (*submit)(struct blk_io *io, struct blk_req *r, enum blk_io_op op, int fd, uint64_t off);
    /* Start what is queued. */
    void (*kick)(struct blk_io *io);
    /* Wait for everything started to complete (reported as usual). */
    void (*drain)(struct blk_io *io);
    void (*free)(struct blk_io *io);
};

struct blk_io {
    const struct blk_io_ops *ops;
    struct blk_dev *d;
};

/* depth: requests in flight at most. NULL with errno if io_uring is unavailable. */
struct blk_io *blk_io_uring_new(struct blk_dev *d, unsigned depth);
struct blk_io *blk_io_sync_new(struct blk_dev *d);

#endif
