/* blk.h - blkback's device, queue and request objects, shared by the files
 * of backends/blk/. See backends/README.md for the design.
 */
#ifndef BLK_H
#define BLK_H

#include "be.h"
#include "be_fault_mode.h"
#include "blk_check.h"
#include "blk_pgrant.h"
#include "blk_vcache.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#define BLK_MAX_QUEUES     4u
#define BLK_MAX_RING_ORDER 4u
/* Persistent grants kept per queue (Linux blkback's default bound). */
#define BLK_MAX_PGRANTS 1056u
/* Held volatile-cache data beyond which it is written back, as a disk's cache would. */
#define BLK_VCACHE_MAX (64u << 20)

enum blk_cache {
    BLK_CACHE_NONE,      /* O_DIRECT */
    BLK_CACHE_WRITEBACK, /* page cache, fdatasync on flush */
    BLK_CACHE_VOLATILE,  /* held in this process until a flush */
};

struct blk_config {
    char *path; /* backing file or block device, from params */
    bool readonly;
    enum blk_cache cache;
    bool discard_enable;
};

/* The open backing store. */
struct blk_disk {
    int fd;          /* buffered; always open */
    int fd_direct;   /* O_DIRECT, or -1 */
    bool direct_off; /* O_DIRECT failed with EFAULT: not used any more */
    unsigned dio_align;
    bool is_bdev;
    uint64_t sectors; /* 512-byte sectors */
    unsigned phys_sector_size;
    bool can_discard;
    unsigned discard_granularity;
};

struct blk_queue;
struct blk_io;

enum blk_stage {
    BLK_STAGE_DATA,  /* the read or write of the segments */
    BLK_STAGE_FLUSH, /* the flush of a flush or barrier */
};

struct blk_req {
    struct blk_req *next; /* free list, done list, delayed list */
    struct blk_queue *q;
    struct blk_parsed p;
    struct blk_seg *segs; /* p.direct, or allocated for indirect */
    enum blk_stage stage;
    int16_t status;
    uint64_t due_ms;  /* when a delayed ("slow" fault) response is due */
    size_t bytes;     /* nr_sectors * 512 */
    int io_op, io_fd; /* the I/O an engine runs for it now (enum blk_io_op) */
    uint64_t io_off;

    /* Mappings of the segments' pages. */
    void *tmap;             /* one transient mapping of all pages, or NULL */
    void **page;            /* per segment */
    struct blk_pgrant **pg; /* per segment: persistent entry, or NULL (single map) */
    struct iovec *iov;
    unsigned niov;
    void *page_inline[BLKIF_MAX_SEGMENTS_PER_REQUEST];
    struct blk_pgrant *pg_inline[BLKIF_MAX_SEGMENTS_PER_REQUEST];
    struct iovec iov_inline[BLKIF_MAX_SEGMENTS_PER_REQUEST];
};

struct blk_queue {
    struct blk_dev *d;
    unsigned idx;
    struct be_ring ring;
    blkif_back_ring_t br;
    bool attached;        /* br is set up */
    bool broken;          /* the frontend broke this ring's protocol; not served */
    bool push;            /* responses written, not yet pushed */
    struct blk_req *reqs; /* one per ring slot */
    struct blk_req *free;
    struct blk_pgcache *pgc; /* persistent grants, or NULL */
};

struct blk_dev {
    struct be_dev *be;
    struct blk_config cfg;
    struct blk_disk disk;
    struct blk_limits lim;
    struct blk_vcache *vc; /* cache=volatile; lives as long as the process */
    const char *io_choice; /* --io: "auto", "uring" or "sync" */

    /* The connection. */
    unsigned nqueues;
    struct blk_queue *q;
    bool persistent;
    struct blk_io *io;
    bool warned_dio, warned_vcache;
    unsigned inflight;       /* requests started and not complete, barrier excluded */
    struct blk_req *barrier; /* a barrier waiting for the drain or running */
    bool barrier_started;
    struct blk_req *done_head, **done_tail;       /* complete, not yet answered */
    struct blk_req *delayed_head, **delayed_tail; /* "slow": answered when due */
    uint64_t delay_timer, run_timer;
    bool running;

    /* Injected faults. */
    struct be_fault_mode fm;
    uint64_t corrupted; /* responses corrupted so far (alternates the kind) */

    /* Counters for the disconnect log line. */
    uint64_t nreq, nerr;
};

/* blk_config.c: toolstack keys. */
int blk_config_read(struct blk_dev *d);
void blk_config_clear(struct blk_config *c);

/* blk_disk.c: the backing store. */
int blk_disk_open(struct blk_dev *d);
void blk_disk_close(struct blk_disk *k);
/* Discard nr sectors from sector: 0 or -errno. */
int blk_disk_discard(struct blk_disk *k, uint64_t sector, uint64_t nr);
/* Transfer iov at off, skipping the first done bytes: 0 or -errno. */
int blk_disk_rw(int fd, bool write, const struct iovec *iov, unsigned niov, uint64_t off,
                size_t done, size_t total);

/* blk_publish.c */
int blk_publish(struct be_dev *be, xs_transaction_t t);

/* blk_connect.c */
int blk_connect(struct be_dev *be);
void blk_disconnect(struct be_dev *be);

/* blk_ring.c: consuming requests, writing responses. */
void blk_ring_event(struct be_dev *be, struct be_ring *r, void *opaque);
bool blk_ring_consume(struct blk_queue *q);
void blk_ring_respond(struct blk_req *r);
void blk_ring_push(struct blk_queue *q);

/* blk_segs.c: grant mappings of a request's segments. */
/* Read an indirect request's segment pages into r->segs: status, *why on error. */
int blk_segs_indirect(struct blk_req *r, const char **why);
/* Map the segments' pages and build r->iov. 0, or -1 with errno. */
int blk_segs_map(struct blk_req *r);
void blk_segs_unmap(struct blk_req *r);
/* Unmap, free, and return r to its queue's free list. */
void blk_req_release(struct blk_req *r);
/* The persistent grant cache's map and unmap (opaque: the queue). */
void *blk_pg_map(void *opaque, uint32_t gref);
void blk_pg_unmap(void *opaque, void *page);

/* blk_dispatch.c: running requests. */
void blk_dispatch(struct blk_req *r, const blkif_request_t *req);
void blk_io_done(struct blk_req *r, int res);
/* Consume, start, complete and answer until nothing moves. */
void blk_run(struct blk_dev *d);
/* Drop everything not yet answered (disconnect, after the engine drained). */
void blk_drop_pending(struct blk_dev *d);

/* blk_fault.c: injected faults. */
void blk_fault(struct be_dev *be, const struct be_fault *f);
/* The response for r as the frontend will see it (corrupted if asked). */
void blk_fault_response(struct blk_dev *d, blkif_response_t *rsp);
/* Answer r now, or later if responses are being delayed. */
void blk_fault_deliver(struct blk_dev *d, struct blk_req *r);
void blk_fault_stop(struct blk_dev *d);

#endif
