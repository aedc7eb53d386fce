/* bb.h - blkback's device, queue and request objects, shared by the files
 * of backends/blk/. See backends/README.md for the design.
 */
#ifndef BB_H
#define BB_H

#include "be.h"
#include "bb_check.h"
#include "bb_pgrant.h"
#include "bb_vcache.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#define BB_MAX_QUEUES     4u
#define BB_MAX_RING_ORDER 4u
/* Pages of a device's requests mapped at once: requests wait on the ring
 * past this. Without it one frontend could make us hold ~524 k mappings
 * (4 queues x 512 slots x 256 indirect segments); 4096 pages (16 MiB) keep
 * 16 of the largest requests in flight. */
#define BB_MAPPED_MAX 4096u
/* Persistent grants kept per queue (Linux blkback's default bound). */
#define BB_MAX_PGRANTS 1056u
/* Memory the volatile cache may take (what it allocates, not only the data it
 * holds) beyond which it is written back, as a disk's cache would. */
#define BB_VCACHE_MAX (64u << 20)

enum bb_cache {
    BB_CACHE_NONE,      /* O_DIRECT */
    BB_CACHE_WRITEBACK, /* page cache, fdatasync on flush */
    BB_CACHE_VOLATILE,  /* held in this process until a flush */
};

struct bb_config {
    char *path; /* backing file or block device, from params */
    bool readonly;
    enum bb_cache cache;
    bool discard_enable;
};

/* The open backing store. */
struct bb_disk {
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

struct bb_queue;
struct bb_io;

enum bb_stage {
    BB_STAGE_DATA,  /* the read or write of the segments */
    BB_STAGE_FLUSH, /* the flush of a flush or barrier */
};

struct bb_req {
    struct bb_req *next; /* free list, done list */
    struct bb_queue *q;
    struct bb_parsed p;
    struct bb_seg *segs; /* p.direct, or allocated for indirect */
    enum bb_stage stage;
    int16_t status;
    size_t bytes;     /* nr_sectors * 512 */
    int io_op, io_fd; /* the I/O an engine runs for it now (enum bb_io_op) */
    uint64_t io_off;

    /* Mappings of the segments' pages. */
    void *tmap;            /* one transient mapping of all pages, or NULL */
    void **page;           /* per segment */
    struct bb_pgrant **pg; /* per segment: persistent entry, or NULL (single map) */
    struct iovec *iov;
    unsigned niov;
    unsigned held; /* pages counted in the device's mapped */
    void *page_inline[BLKIF_MAX_SEGMENTS_PER_REQUEST];
    struct bb_pgrant *pg_inline[BLKIF_MAX_SEGMENTS_PER_REQUEST];
    struct iovec iov_inline[BLKIF_MAX_SEGMENTS_PER_REQUEST];
};

struct bb_queue {
    struct bb_dev *d;
    unsigned idx;
    struct be_ring ring;
    blkif_back_ring_t br;
    bool attached;       /* br is set up */
    bool broken;         /* the frontend broke this ring's protocol; not served */
    bool push;           /* responses written, not yet pushed */
    struct bb_req *reqs; /* one per ring slot */
    struct bb_req *free;
    struct bb_pgcache *pgc; /* persistent grants, or NULL */
};

struct bb_dev {
    struct be_dev *be;
    struct bb_config cfg;
    struct bb_disk disk;
    struct bb_limits lim;
    struct bb_vcache *vc;  /* cache=volatile; lives as long as the process */
    const char *io_choice; /* --io: "auto", "uring" or "sync" */

    /* The connection. */
    unsigned nqueues;
    struct bb_queue *q;
    bool persistent;
    struct bb_io *io;
    bool warned_dio, warned_vcache;
    unsigned inflight;      /* requests started and not complete, barrier excluded */
    unsigned mapped;        /* pages of requests mapped now (BB_MAPPED_MAX) */
    unsigned mapped_peak;   /* for the disconnect log line */
    struct bb_req *barrier; /* a barrier waiting for the drain or running */
    bool barrier_started;
    struct bb_req *done_head, **done_tail; /* complete, not yet answered */
    uint64_t run_timer;
    bool running;

    /* Counters for the disconnect log line. */
    uint64_t nreq, nerr;
};

/* bb_config.c: toolstack keys. */
int bb_config_read(struct bb_dev *d);
void bb_config_clear(struct bb_config *c);

/* bb_disk.c: the backing store. */
int bb_disk_open(struct bb_dev *d);
void bb_disk_close(struct bb_disk *k);
/* Discard nr sectors from sector: 0 or -errno. */
int bb_disk_discard(struct bb_disk *k, uint64_t sector, uint64_t nr);
/* Transfer iov at off, skipping the first done bytes: 0 or -errno. */
int bb_disk_rw(int fd, bool write, const struct iovec *iov, unsigned niov, uint64_t off,
               size_t done, size_t total);

/* bb_publish.c */
int bb_publish(struct be_dev *be, xs_transaction_t t);

/* bb_connect.c */
int bb_connect(struct be_dev *be);
void bb_disconnect(struct be_dev *be);

/* bb_ring.c: consuming requests, writing responses. */
void bb_ring_event(struct be_dev *be, struct be_ring *r, void *opaque);
bool bb_ring_consume(struct bb_queue *q);
/* Write r's response into its ring (unpublished), release r. */
void bb_ring_respond(struct bb_req *r);
/* Publish the responses written (the core's be_ring_publish). */
void bb_ring_push(struct bb_queue *q);

/* bb_segs.c: grant mappings of a request's segments. */
/* Read an indirect request's segment pages into r->segs: status, *why on error. */
int bb_segs_indirect(struct bb_req *r, const char **why);
/* Map the segments' pages and build r->iov. 0, or -1 with errno. */
int bb_segs_map(struct bb_req *r);
void bb_segs_unmap(struct bb_req *r);
/* Unmap, free, and return r to its queue's free list. */
void bb_req_release(struct bb_req *r);
/* The persistent grant cache's map and unmap (opaque: the queue). */
void *bb_pg_map(void *opaque, uint32_t gref);
void bb_pg_unmap(void *opaque, void *page);

/* bb_dispatch.c: running requests. */
void bb_dispatch(struct bb_req *r, const blkif_request_t *req);
void bb_io_done(struct bb_req *r, int res);
/* Consume, start, complete and answer until nothing moves. */
void bb_run(struct bb_dev *d);
/* Drop everything not yet answered (disconnect, after the engine drained). */
void bb_drop_pending(struct bb_dev *d);

/* bb_corrupt.c: the fault layer's corrupt hook (struct be_class_ops). */
bool bb_corrupt(struct be_dev *be, struct be_ring *r, RING_IDX idx, enum be_corrupt how);

#endif
