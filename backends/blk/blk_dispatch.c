/* blk_dispatch.c - running validated requests, and the pump that moves
 * everything along (blk_run).
 *
 * A request is decoded and checked (blk_check.c), its pages mapped
 * (blk_segs.c), then run: reads and writes go to the I/O engine (or, with
 * cache=volatile, to the held-write cache); a flush runs after its data;
 * a barrier waits until nothing else is in flight (no request is consumed
 * meanwhile), then writes its data and flushes; a discard runs at once.
 * Completed requests are answered in completion order.
 */
#define _GNU_SOURCE
#include "blk.h"

#include "blk_io.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *kind_name(enum blk_kind k)
{
    static const char *const names[] = {"read", "write", "flush", "barrier", "discard"};
    return k <= BLK_DISCARD ? names[k] : "?";
}

static void finish(struct blk_req *r, int status)
{
    struct blk_dev *d = r->q->d;
    r->status = (int16_t)status;
    if (status != BLKIF_RSP_OKAY)
        d->nerr++;
    blk_segs_unmap(r); /* give the pages back before answering */
    r->next = NULL;
    *d->done_tail = r;
    d->done_tail = &r->next;
}

static void refuse(struct blk_req *r, int status, const char *why)
{
    BE_LOG_RL(r->q->d->be,
              "queue %u: request id %#" PRIx64 " op %u nseg %u sector %" PRIu64 " refused (%s): %s",
              r->q->idx, r->p.id, r->p.op, r->p.nseg, r->p.sector,
              status == BLKIF_RSP_EOPNOTSUPP ? "EOPNOTSUPP" : "ERROR", why);
    finish(r, status);
}

/* cache=volatile: write back what is held, then make it durable. */
static int volatile_writeback(struct blk_dev *d)
{
    if (blk_vcache_writeback(d->vc, d->disk.fd) < 0)
        return -errno;
    return fdatasync(d->disk.fd) < 0 ? -errno : 0;
}

/* cache=volatile: reads see held writes; writes are held. */
static int volatile_data(struct blk_req *r)
{
    struct blk_dev *d = r->q->d;
    if (r->p.kind == BLK_READ) {
        int res = blk_disk_rw(d->disk.fd, false, r->iov, r->niov, r->p.sector * BLK_SECTOR_SIZE, 0,
                              r->bytes);
        if (res == 0)
            blk_vcache_overlay(d->vc, r->p.sector, r->iov, r->niov);
        return res;
    }
    if (blk_vcache_write(d->vc, r->p.sector, r->iov, r->niov) < 0)
        return -errno;
    if (blk_vcache_bytes(d->vc) > BLK_VCACHE_MAX) {
        if (!d->warned_vcache)
            BE_LOG(d->be, "volatile cache holds over %u MiB: writing it back",
                   BLK_VCACHE_MAX >> 20);
        d->warned_vcache = true;
        return volatile_writeback(d);
    }
    return 0;
}

static int pick_fd(struct blk_req *r)
{
    struct blk_disk *k = &r->q->d->disk;
    if (k->fd_direct < 0 || k->direct_off)
        return k->fd;
    uint64_t a = k->dio_align;
    if ((r->p.sector * BLK_SECTOR_SIZE) % a)
        return k->fd;
    for (unsigned i = 0; i < r->niov; i++)
        if ((uintptr_t)r->iov[i].iov_base % a || r->iov[i].iov_len % a)
            return k->fd;
    return k->fd_direct;
}

static void start_flush(struct blk_req *r)
{
    struct blk_dev *d = r->q->d;
    r->stage = BLK_STAGE_FLUSH;
    if (d->vc) {
        blk_io_done(r, volatile_writeback(d));
        return;
    }
    d->io->ops->submit(d->io, r, BLK_IO_FLUSH, d->disk.fd, 0);
}

static void start_data(struct blk_req *r)
{
    struct blk_dev *d = r->q->d;
    r->stage = BLK_STAGE_DATA;
    if (d->vc) {
        blk_io_done(r, volatile_data(r));
        return;
    }
    enum blk_io_op op = r->p.kind == BLK_READ ? BLK_IO_READ : BLK_IO_WRITE;
    d->io->ops->submit(d->io, r, op, pick_fd(r), r->p.sector * BLK_SECTOR_SIZE);
}

static void start(struct blk_req *r)
{
    r->q->d->inflight++;
    if ((r->p.kind == BLK_FLUSH || r->p.kind == BLK_BARRIER) && r->p.nseg == 0)
        start_flush(r);
    else
        start_data(r);
}

static void do_discard(struct blk_req *r)
{
    struct blk_dev *d = r->q->d;
    if (d->vc)
        blk_vcache_drop(d->vc, r->p.sector, r->p.nr_sectors);
    int res = blk_disk_discard(&d->disk, r->p.sector, r->p.nr_sectors);
    if (res == -EOPNOTSUPP) {
        refuse(r, BLKIF_RSP_EOPNOTSUPP, "the backing store cannot discard");
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

void blk_dispatch(struct blk_req *r, const blkif_request_t *req)
{
    struct blk_dev *d = r->q->d;
    const char *why = "";
    d->nreq++;
    int st = blk_decode(&d->lim, req, &r->p, &why);
    if (st == BLKIF_RSP_OKAY && r->p.kind == BLK_DISCARD)
        st = blk_check_discard(&d->lim, &r->p, &why);
    else if (st == BLKIF_RSP_OKAY) {
        if (r->p.indirect)
            st = blk_segs_indirect(r, &why);
        else
            r->segs = r->p.direct;
        if (st == BLKIF_RSP_OKAY)
            st = blk_check_segs(&d->lim, &r->p, r->segs, &why);
    }
    if (st != BLKIF_RSP_OKAY) {
        refuse(r, st, why);
        return;
    }
    r->bytes = (size_t)r->p.nr_sectors * BLK_SECTOR_SIZE;
    if (r->p.kind != BLK_DISCARD && r->p.nseg > 0 && blk_segs_map(r) < 0) {
        char msg[96];
        snprintf(msg, sizeof(msg), "mapping its grants failed: %s", strerror(errno));
        refuse(r, BLKIF_RSP_ERROR, msg);
        return;
    }
    switch (r->p.kind) {
    case BLK_DISCARD:
        do_discard(r);
        break;
    case BLK_BARRIER:
        d->barrier = r; /* started by blk_run once nothing else is in flight */
        d->barrier_started = false;
        break;
    default:
        start(r);
        break;
    }
}

void blk_io_done(struct blk_req *r, int res)
{
    struct blk_dev *d = r->q->d;
    bool direct = r->stage == BLK_STAGE_DATA && d->disk.fd_direct >= 0 &&
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
            if (d->disk.dio_align < BLK_PAGE_SIZE)
                d->disk.dio_align = BLK_PAGE_SIZE;
        }
        enum blk_io_op op = r->p.kind == BLK_READ ? BLK_IO_READ : BLK_IO_WRITE;
        d->io->ops->submit(d->io, r, op, d->disk.fd, r->p.sector * BLK_SECTOR_SIZE);
        return;
    }
    if (res < 0) {
        BE_LOG_RL(d->be, "%s of %" PRIu64 " sectors at %" PRIu64 " on %s failed: %s",
                  r->stage == BLK_STAGE_FLUSH ? "flush" : kind_name(r->p.kind), r->p.nr_sectors,
                  r->p.sector, d->cfg.path, strerror(-res));
        d->inflight--;
        finish(r, res == -EOPNOTSUPP && r->stage == BLK_STAGE_FLUSH ? BLKIF_RSP_EOPNOTSUPP
                                                                    : BLKIF_RSP_ERROR);
        return;
    }
    if (r->stage == BLK_STAGE_DATA && (r->p.kind == BLK_FLUSH || r->p.kind == BLK_BARRIER)) {
        start_flush(r);
        return;
    }
    d->inflight--;
    finish(r, BLKIF_RSP_OKAY);
}

/* Answer what completed. True if anything was. */
static bool answer_done(struct blk_dev *d)
{
    bool any = false;
    while (d->done_head) {
        struct blk_req *r = d->done_head;
        d->done_head = r->next;
        if (!d->done_head)
            d->done_tail = &d->done_head;
        r->next = NULL;
        if (r == d->barrier) {
            d->barrier = NULL;
            d->barrier_started = false;
        }
        blk_fault_deliver(d, r);
        any = true;
    }
    return any;
}

static bool start_barrier(struct blk_dev *d)
{
    if (!d->barrier || d->barrier_started || d->inflight)
        return false;
    d->barrier_started = true;
    start(d->barrier);
    return true;
}

static void run_again(void *opaque)
{
    struct blk_dev *d = opaque;
    d->run_timer = 0;
    blk_run(d);
}

void blk_run(struct blk_dev *d)
{
    if (d->running || !d->q || !d->io)
        return;
    d->running = true;
    for (unsigned round = 0;; round++) {
        bool progress = false;
        for (unsigned i = 0; i < d->nqueues; i++)
            progress |= blk_ring_consume(&d->q[i]);
        progress |= start_barrier(d);
        d->io->ops->kick(d->io);
        progress |= answer_done(d);
        for (unsigned i = 0; i < d->nqueues; i++)
            blk_ring_push(&d->q[i]);
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

void blk_drop_pending(struct blk_dev *d)
{
    while (d->done_head) {
        struct blk_req *r = d->done_head;
        d->done_head = r->next;
        if (r == d->barrier)
            d->barrier = NULL;
        blk_req_release(r);
    }
    d->done_tail = &d->done_head;
    if (d->barrier) /* still waiting for the drain: never started */
        blk_req_release(d->barrier);
    d->barrier = NULL;
    d->barrier_started = false;
    d->inflight = 0;
}
