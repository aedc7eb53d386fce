/* bb_dispatch.c - running validated requests, and the pump that moves
 * everything along (bb_run).
 *
 * A request is decoded and checked (bb_check.c) as it is taken off the
 * ring, its pages mapped with the rest of its ring pass (bb_pass.c), then
 * run: reads and writes go to the I/O engine (or, with cache=volatile, to
 * the held-write cache); a flush runs after its data; a barrier waits until
 * nothing else is in flight (no request is consumed meanwhile), then writes
 * its data and flushes; a discard runs at once. Completed requests are
 * answered in completion order.
 */
#define _GNU_SOURCE
#include "bb.h"

#include "bb_io.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *kind_name(enum bb_kind k)
{
    static const char *const names[] = {"read", "write", "flush", "barrier", "discard"};
    return k <= BB_DISCARD ? names[k] : "?";
}

static void finish(struct bb_req *r, int status)
{
    struct bb_dev *d = r->q->d;
    r->status = (int16_t)status;
    if (status != BLKIF_RSP_OKAY)
        d->nerr++;
    bb_segs_unmap(r); /* give the pages back before answering */
    r->next = NULL;
    *d->done_tail = r;
    d->done_tail = &r->next;
}

void bb_refuse(struct bb_req *r, int status, const char *why)
{
    BE_LOG_RL(r->q->d->be,
              "queue %u: request id %#" PRIx64 " op %u nseg %u sector %" PRIu64 " refused (%s): %s",
              r->q->idx, r->p.id, r->p.op, r->p.nseg, r->p.sector,
              status == BLKIF_RSP_EOPNOTSUPP ? "EOPNOTSUPP" : "ERROR", why);
    finish(r, status);
}

/* cache=volatile: write back what is held, then make it durable. */
static int volatile_writeback(struct bb_dev *d)
{
    if (bb_vcache_writeback(d->vc, d->disk.fd) < 0)
        return -errno;
    return fdatasync(d->disk.fd) < 0 ? -errno : 0;
}

/* cache=volatile: reads see held writes; writes are held. */
static int volatile_data(struct bb_req *r)
{
    struct bb_dev *d = r->q->d;
    if (r->p.kind == BB_READ) {
        int res = bb_disk_rw(d->disk.fd, false, r->iov, r->niov, r->p.sector * BB_SECTOR_SIZE, 0,
                             r->bytes);
        if (res == 0)
            bb_vcache_overlay(d->vc, r->p.sector, r->iov, r->niov);
        return res;
    }
    if (bb_vcache_write(d->vc, r->p.sector, r->iov, r->niov) < 0)
        return -errno;
    if (bb_vcache_bytes(d->vc) > BB_VCACHE_MAX) {
        if (!d->warned_vcache)
            BE_LOG(d->be, "volatile cache holds over %u MiB: writing it back", BB_VCACHE_MAX >> 20);
        d->warned_vcache = true;
        return volatile_writeback(d);
    }
    return 0;
}

static int pick_fd(struct bb_req *r)
{
    struct bb_disk *k = &r->q->d->disk;
    if (k->fd_direct < 0 || k->direct_off)
        return k->fd;
    uint64_t a = k->dio_align;
    if ((r->p.sector * BB_SECTOR_SIZE) % a)
        return k->fd;
    for (unsigned i = 0; i < r->niov; i++)
        if ((uintptr_t)r->iov[i].iov_base % a || r->iov[i].iov_len % a)
            return k->fd;
    return k->fd_direct;
}

static void start_flush(struct bb_req *r)
{
    struct bb_dev *d = r->q->d;
    r->stage = BB_STAGE_FLUSH;
    if (d->vc) {
        bb_io_done(r, volatile_writeback(d));
        return;
    }
    d->io->ops->submit(d->io, r, BB_IO_FLUSH, d->disk.fd, 0);
}

static void start_data(struct bb_req *r)
{
    struct bb_dev *d = r->q->d;
    r->stage = BB_STAGE_DATA;
    if (d->vc) {
        bb_io_done(r, volatile_data(r));
        return;
    }
    enum bb_io_op op = r->p.kind == BB_READ ? BB_IO_READ : BB_IO_WRITE;
    d->io->ops->submit(d->io, r, op, pick_fd(r), r->p.sector * BB_SECTOR_SIZE);
}

static void start(struct bb_req *r)
{
    r->q->d->inflight++;
    if ((r->p.kind == BB_FLUSH || r->p.kind == BB_BARRIER) && r->p.nseg == 0)
        start_flush(r);
    else
        start_data(r);
}

static void do_discard(struct bb_req *r)
{
    struct bb_dev *d = r->q->d;
    if (d->vc)
        bb_vcache_drop(d->vc, r->p.sector, r->p.nr_sectors);
    int res = bb_disk_discard(&d->disk, r->p.sector, r->p.nr_sectors);
    if (res == -EOPNOTSUPP) {
        bb_refuse(r, BLKIF_RSP_EOPNOTSUPP, "the backing store cannot discard");
        return;
    }
    if (res < 0) {
        BE_LOG_RL(d->be, "discard of %" PRIu64 " sectors at %" PRIu64 " on %s: %s", r->p.nr_sectors,
                  r->p.sector, d->cfg.path, strerror(-res));
        finish(r, BLKIF_RSP_ERROR);
        return;
    }
    finish(r, BLKIF_RSP_OKAY);
}

bool bb_accept(struct bb_req *r, const blkif_request_t *req)
{
    struct bb_dev *d = r->q->d;
    const char *why = "";
    d->nreq++;
    int st = bb_decode(&d->lim, req, &r->p, &why);
    if (st == BLKIF_RSP_OKAY && r->p.kind == BB_DISCARD) {
        st = bb_check_discard(&d->lim, &r->p, &why);
    } else if (st == BLKIF_RSP_OKAY && !r->p.indirect) {
        r->segs = r->p.direct;
        st = bb_check_segs(&d->lim, &r->p, r->segs, &why);
    }
    if (st != BLKIF_RSP_OKAY) {
        bb_refuse(r, st, why);
        return false;
    }
    /* Its pages count against BB_MAPPED_MAX from now, so that the ring stops
     * being consumed before the pass maps them. */
    r->held = r->p.kind == BB_DISCARD ? 0 : r->p.nseg;
    d->mapped += r->held;
    if (d->mapped > d->mapped_peak)
        d->mapped_peak = d->mapped;
    return true;
}

void bb_start(struct bb_req *r)
{
    struct bb_dev *d = r->q->d;
    r->bytes = (size_t)r->p.nr_sectors * BB_SECTOR_SIZE;
    switch (r->p.kind) {
    case BB_DISCARD:
        do_discard(r);
        break;
    case BB_BARRIER:
        d->barrier = r; /* started by bb_run once nothing else is in flight */
        d->barrier_started = false;
        break;
    default:
        start(r);
        break;
    }
}

void bb_io_done(struct bb_req *r, int res)
{
    struct bb_dev *d = r->q->d;
    bool direct = r->stage == BB_STAGE_DATA && d->disk.fd_direct >= 0 &&
                  r->io_fd == d->disk.fd_direct && !d->vc;
    if (direct && (res == -EINVAL || res == -EFAULT)) {
        /* EINVAL: O_DIRECT refused this alignment; learn a coarser one.
         * EFAULT: it cannot reach granted pages at all (gntdev mappings in
         * some domain types); stop using it. Either way, redo it buffered. */
        if (res == -EFAULT) {
            BE_LOG(d->be,
                   "%s: O_DIRECT cannot reach granted pages (EFAULT); using the page "
                   "cache from now on",
                   d->cfg.path);
            d->disk.direct_off = true;
        } else {
            if (!d->warned_dio)
                BE_LOG(d->be,
                       "%s: O_DIRECT refused a %u-byte aligned request; unaligned ones go "
                       "through the page cache",
                       d->cfg.path, d->disk.dio_align);
            d->warned_dio = true;
            if (d->disk.dio_align < BB_PAGE_SIZE)
                d->disk.dio_align = BB_PAGE_SIZE;
        }
        enum bb_io_op op = r->p.kind == BB_READ ? BB_IO_READ : BB_IO_WRITE;
        d->io->ops->submit(d->io, r, op, d->disk.fd, r->p.sector * BB_SECTOR_SIZE);
        return;
    }
    if (res < 0) {
        BE_LOG_RL(d->be, "%s of %" PRIu64 " sectors at %" PRIu64 " on %s failed: %s",
                  r->stage == BB_STAGE_FLUSH ? "flush" : kind_name(r->p.kind), r->p.nr_sectors,
                  r->p.sector, d->cfg.path, strerror(-res));
        d->inflight--;
        finish(r, res == -EOPNOTSUPP && r->stage == BB_STAGE_FLUSH ? BLKIF_RSP_EOPNOTSUPP
                                                                   : BLKIF_RSP_ERROR);
        return;
    }
    if (r->stage == BB_STAGE_DATA && (r->p.kind == BB_FLUSH || r->p.kind == BB_BARRIER)) {
        start_flush(r);
        return;
    }
    d->inflight--;
    finish(r, BLKIF_RSP_OKAY);
}

uint64_t bb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Answer what completed. True if anything was. */
static bool answer_done(struct bb_dev *d)
{
    bool any = false;
    while (d->done_head) {
        struct bb_req *r = d->done_head;
        d->done_head = r->next;
        if (!d->done_head)
            d->done_tail = &d->done_head;
        r->next = NULL;
        if (r == d->barrier) {
            d->barrier = NULL;
            d->barrier_started = false;
        }
        bb_ring_respond(r);
        any = true;
    }
    return any;
}

bool bb_answer(struct bb_dev *d)
{
    d->io->ops->kick(d->io);
    bool any = answer_done(d);
    for (unsigned i = 0; i < d->nqueues; i++)
        bb_ring_push(&d->q[i]);
    return any;
}

static bool start_barrier(struct bb_dev *d)
{
    if (!d->barrier || d->barrier_started || d->inflight)
        return false;
    d->barrier_started = true;
    start(d->barrier);
    return true;
}

static void run_again(void *opaque)
{
    struct bb_dev *d = opaque;
    d->run_timer = 0;
    bb_run(d);
}

void bb_run(struct bb_dev *d)
{
    if (d->running || !d->q || !d->io)
        return;
    d->running = true;
    for (unsigned round = 0;; round++) {
        bool progress = false;
        for (unsigned i = 0; i < d->nqueues; i++)
            progress |= bb_ring_consume(&d->q[i]);
        progress |= start_barrier(d);
        progress |= bb_answer(d);
        if (!progress)
            break;
        if (round == 64) {
            /* A busy frontend: let xenstore and timers in, then carry on. */
            if (!d->run_timer)
                d->run_timer = be_loop_add_timer(be_loop_of(d->be), 0, run_again, d);
            break;
        }
    }
    d->running = false;
}

void bb_drop_pending(struct bb_dev *d)
{
    while (d->done_head) {
        struct bb_req *r = d->done_head;
        d->done_head = r->next;
        if (r == d->barrier)
            d->barrier = NULL;
        bb_req_release(r);
    }
    d->done_tail = &d->done_head;
    if (d->barrier) /* still waiting for the drain: never started */
        bb_req_release(d->barrier);
    d->barrier = NULL;
    d->barrier_started = false;
    d->inflight = 0;
}
