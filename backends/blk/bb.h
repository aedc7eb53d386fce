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
/* Persistent grants kept per queue (Linux blkback's default bound), in pages
 * mapped. */
#define BB_MAX_PGRANTS 1056u
/* A ring pass that has run this long answers what is done so far before it
 * goes on (bb_pass.c): a fresh connection's first pass touches every page
 * for the first time and can take tens of ms on a loaded machine. */
#define BB_PASS_ANSWER_NS 1000000u
/* Indirect segment pages a ring pass maps in one call (one page holds a
 * request's 256 segments, so this many requests). */
#define BB_IND_BATCH 64u
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
    void *tmap;            /* the pages outside the cache, in one mapping, or NULL */
    unsigned tmap_n;       /* its pages */
    void **page;           /* per segment */
    struct bb_pgrant **pg; /* per segment: persistent entry, or NULL (in tmap) */
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
    struct bb_req **pass;   /* the requests taken in one ring pass (one per slot) */
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
    uint64_t first_taken;   /* ns: the connection's first request taken, until answered */
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
/* The same for n requests (their pages at most BB_IND_BATCH) in one map: 0,
 * or -1 if it failed (a request whose segs stay NULL is to be read alone). */
int bb_segs_indirect_batch(struct bb_req **v, unsigned n);
/* Take the persistent entries of r's segments (pending ones are mapped by
 * bb_pgcache_fill). 0, or -1 with errno. */
int bb_segs_take(struct bb_req *r);
/* After the fill: map what is outside the cache, build r->iov. 0, or -1
 * with errno and, if one ref is to blame, *bad_gref (else UINT32_MAX). */
int bb_segs_map(struct bb_req *r, uint32_t *bad_gref);
void bb_segs_unmap(struct bb_req *r);
/* Unmap, free, and return r to its queue's free list. */
void bb_req_release(struct bb_req *r);
/* The persistent grant cache's map and unmap (opaque: the queue). */
void *bb_pg_map(void *opaque, uint32_t *grefs, unsigned n);
void bb_pg_unmap(void *opaque, void *addr, unsigned n);

/* bb_pass.c: one ring pass's requests, from taken to started. */
void bb_pass_run(struct bb_queue *q, struct bb_req **v, unsigned n);

/* bb_dispatch.c: running requests. */
/* Decode and check a request just taken off the ring (indirect segments are
 * checked once read); its pages count as mapped from now. False if it was
 * refused (answered). */
bool bb_accept(struct bb_req *r, const blkif_request_t *req);
/* Run an accepted request whose pages are mapped. */
void bb_start(struct bb_req *r);
/* Answer r with status (not OKAY) and log why (rate limited). */
void bb_refuse(struct bb_req *r, int status, const char *why);
void bb_io_done(struct bb_req *r, int res);
/* Consume, start, complete and answer until nothing moves. */
void bb_run(struct bb_dev *d);
/* Start what the engine holds, answer what is done, publish: true if
 * anything was answered. */
bool bb_answer(struct bb_dev *d);
/* CLOCK_MONOTONIC in ns. */
uint64_t bb_now_ns(void);
/* Drop everything not yet answered (disconnect, after the engine drained). */
void bb_drop_pending(struct bb_dev *d);

/* bb_corrupt.c: the fault layer's corrupt hook (struct be_class_ops). */
bool bb_corrupt(struct be_dev *be, struct be_ring *r, RING_IDX idx, enum be_corrupt how);

#endif
