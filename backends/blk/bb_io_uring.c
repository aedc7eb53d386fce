/* bb_io_uring.c - the io_uring engine: one SQE per request (readv, writev
 * or fdatasync), completions signalled on an eventfd in the event loop.
 * The ring has room for every request the frontend's rings can hold, so a
 * submission never waits. A short transfer is finished synchronously.
 */
#define _GNU_SOURCE
#include "bb_io.h"

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct uring_io {
    struct bb_io io;
    struct io_uring ring;
    bool ring_ok;
    int efd;
    unsigned inflight;       /* submitted to the kernel or queued in the SQ */
    struct bb_req *deferred; /* no SQE: failed at the next kick */
};

/* A short transfer is finished here, synchronously. */
static void complete(struct bb_req *r, int res)
{
    if (res >= 0 && r->io_op != BB_IO_FLUSH) {
        size_t got = (size_t)res;
        res = got >= r->bytes ? 0
                              : bb_disk_rw(r->io_fd, r->io_op == BB_IO_WRITE, r->iov, r->niov,
                                           r->io_off, got, r->bytes);
    } else if (res > 0) {
        res = 0;
    }
    bb_io_done(r, res);
}

static void reap(struct uring_io *u)
{
    struct io_uring_cqe *cqe;
    while (io_uring_peek_cqe(&u->ring, &cqe) == 0 && cqe) {
        struct bb_req *r = io_uring_cqe_get_data(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&u->ring, cqe);
        u->inflight--;
        complete(r, res);
    }
}

static void uring_submit(struct bb_io *io, struct bb_req *r, enum bb_io_op op, int fd, uint64_t off)
{
    struct uring_io *u = (struct uring_io *)io;
    r->io_op = op;
    r->io_fd = fd;
    r->io_off = off;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) {
        io_uring_submit(&u->ring);
        sqe = io_uring_get_sqe(&u->ring);
    }
    if (!sqe) {
        r->next = u->deferred;
        u->deferred = r;
        return;
    }
    switch (op) {
    case BB_IO_READ:
        io_uring_prep_readv(sqe, fd, r->iov, r->niov, off);
        break;
    case BB_IO_WRITE:
        io_uring_prep_writev(sqe, fd, r->iov, r->niov, off);
        break;
    case BB_IO_FLUSH:
        io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
        break;
    }
    io_uring_sqe_set_data(sqe, r);
    u->inflight++;
}

static void uring_kick(struct bb_io *io)
{
    struct uring_io *u = (struct uring_io *)io;
    int n = io_uring_submit(&u->ring);
    if (n < 0 && n != -EBUSY && n != -EAGAIN)
        BE_LOG_RL(io->d->be, "io_uring_submit: %s", strerror(-n));
    while (u->deferred) {
        struct bb_req *r = u->deferred;
        u->deferred = r->next;
        r->next = NULL;
        /* Out of SQEs, which the sizing rules out: run it here instead. */
        int res = r->io_op == BB_IO_FLUSH ? (fdatasync(r->io_fd) < 0 ? -errno : 0)
                                          : bb_disk_rw(r->io_fd, r->io_op == BB_IO_WRITE, r->iov,
                                                       r->niov, r->io_off, 0, r->bytes);
        bb_io_done(r, res);
    }
}

static void uring_drain(struct bb_io *io)
{
    struct uring_io *u = (struct uring_io *)io;
    uring_kick(io);
    while (u->inflight) {
        struct io_uring_cqe *cqe;
        int e = io_uring_wait_cqe(&u->ring, &cqe);
        if (e == -EINTR)
            continue;
        if (e < 0) {
            BE_LOG(io->d->be, "io_uring_wait_cqe while draining: %s", strerror(-e));
            break;
        }
        reap(u);
        uring_kick(io); /* a completion may have queued a flush */
    }
}

static void on_eventfd(void *opaque, int fd, uint32_t events)
{
    (void)events;
    struct uring_io *u = opaque;
    uint64_t v;
    if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
        BE_LOG_RL(u->io.d->be, "reading the io_uring eventfd: %s", strerror(errno));
    reap(u);
    bb_run(u->io.d);
}

static void uring_free(struct bb_io *io)
{
    struct uring_io *u = (struct uring_io *)io;
    if (!u)
        return;
    if (u->efd >= 0) {
        be_loop_del_fd(be_loop_of(io->d->be), u->efd);
        close(u->efd);
    }
    if (u->ring_ok)
        io_uring_queue_exit(&u->ring);
    free(u);
}

static const struct bb_io_ops uring_ops = {
    .name = "io_uring",
    .submit = uring_submit,
    .kick = uring_kick,
    .drain = uring_drain,
    .free = uring_free,
};

struct bb_io *bb_io_uring_new(struct bb_dev *d, unsigned depth)
{
    struct uring_io *u = calloc(1, sizeof(*u));
    if (!u)
        return NULL;
    u->io.ops = &uring_ops;
    u->io.d = d;
    u->efd = -1;
    int e = io_uring_queue_init(depth, &u->ring, 0);
    if (e < 0) {
        free(u);
        errno = -e;
        return NULL;
    }
    u->ring_ok = true;
    u->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (u->efd < 0)
        goto fail;
    e = io_uring_register_eventfd(&u->ring, u->efd);
    if (e < 0) {
        errno = -e;
        goto fail;
    }
    if (be_loop_add_fd(be_loop_of(d->be), u->efd, on_eventfd, u) < 0)
        goto fail;
    return &u->io;
fail:;
    int err = errno;
    close(u->efd);
    u->efd = -1;
    uring_free(&u->io);
    errno = err;
    return NULL;
}
