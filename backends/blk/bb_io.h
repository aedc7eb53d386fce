/* bb_io.h - I/O engines: io_uring, and plain preadv/pwritev when io_uring
 * is unavailable (or for cache=volatile, whose reads must see held writes
 * at the moment they complete). An engine runs reads, writes and flushes
 * on the backing store and reports each with bb_io_done(r, res), res 0
 * or -errno, never from inside submit.
 */
#ifndef BB_IO_H
#define BB_IO_H

#include "bb.h"

enum bb_io_op {
    BB_IO_READ,
    BB_IO_WRITE,
    BB_IO_FLUSH,
};

struct bb_io_ops {
    const char *name;
    /* Queue r: op on fd, for r->iov/r->niov at byte offset off (not for flush). */
    void (*submit)(struct bb_io *io, struct bb_req *r, enum bb_io_op op, int fd, uint64_t off);
    /* Start what is queued. */
    void (*kick)(struct bb_io *io);
    /* Wait for everything started to complete (reported as usual). */
    void (*drain)(struct bb_io *io);
    void (*free)(struct bb_io *io);
};

struct bb_io {
    const struct bb_io_ops *ops;
    struct bb_dev *d;
};

/* depth: requests in flight at most. NULL with errno if io_uring is unavailable. */
struct bb_io *bb_io_uring_new(struct bb_dev *d, unsigned depth);
struct bb_io *bb_io_sync_new(struct bb_dev *d);

#endif
