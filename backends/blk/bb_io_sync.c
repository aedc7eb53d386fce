/* bb_io_sync.c - the fallback engine: preadv/pwritev/fdatasync run on the
 * event loop's thread. Submitted requests run at kick time, so that
 * completions never nest inside the dispatcher.
 */
#define _GNU_SOURCE
#include "bb_io.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

struct pending {
    struct bb_req *r;
    enum bb_io_op op;
    int fd;
    uint64_t off;
};

struct sync_io {
    struct bb_io io;
    struct pending *q;
    size_t n, cap;
};

static void sync_submit(struct bb_io *io, struct bb_req *r, enum bb_io_op op, int fd, uint64_t off)
{
    struct sync_io *s = (struct sync_io *)io;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct pending *q = realloc(s->q, cap * sizeof(*q));
        if (!q) {
            bb_io_done(r, -ENOMEM);
            return;
        }
        s->q = q;
        s->cap = cap;
    }
    s->q[s->n++] = (struct pending){r, op, fd, off};
}

static void sync_kick(struct bb_io *io)
{
    struct sync_io *s = (struct sync_io *)io;
    /* A completion may submit more (a barrier's flush after its write): they
     * are appended and run in this same pass. */
    for (size_t i = 0; i < s->n; i++) {
        struct pending p = s->q[i];
        int res;
        if (p.op == BB_IO_FLUSH)
            res = fdatasync(p.fd) < 0 ? -errno : 0;
        else
            res = bb_disk_rw(p.fd, p.op == BB_IO_WRITE, p.r->iov, p.r->niov, p.off, 0, p.r->bytes);
        bb_io_done(p.r, res);
    }
    s->n = 0;
}

static void sync_free(struct bb_io *io)
{
    struct sync_io *s = (struct sync_io *)io;
    if (!s)
        return;
    free(s->q);
    free(s);
}

static const struct bb_io_ops sync_ops = {
    .name = "sync",
    .submit = sync_submit,
    .kick = sync_kick,
    .drain = sync_kick,
    .free = sync_free,
};

struct bb_io *bb_io_sync_new(struct bb_dev *d)
{
    struct sync_io *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->io.ops = &sync_ops;
    s->io.d = d;
    return &s->io;
}
