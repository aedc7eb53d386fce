/* blk_check.h - decoding and validation of blkif requests, pure functions
 * over a private copy of the request (never the shared ring). Every check
 * that keeps a request inside the disk and inside its pages is here.
 */
#ifndef BLK_CHECK_H
#define BLK_CHECK_H

#include "be_ring_defs.h"

#include <stdbool.h>
#include <stdint.h>
#include <xen/io/blkif.h>

#define BLK_SECTOR_SIZE      512u
#define BLK_PAGE_SIZE        4096u
#define BLK_SECTORS_PER_PAGE (BLK_PAGE_SIZE / BLK_SECTOR_SIZE)
/* Segments per indirect request we accept (feature-max-indirect-segments). */
#define BLK_MAX_INDIRECT_SEGS      256u
#define BLK_SEGS_PER_INDIRECT_PAGE (BLK_PAGE_SIZE / sizeof(struct blkif_request_segment))

enum blk_kind {
    BLK_READ,
    BLK_WRITE,
    BLK_FLUSH,   /* write the segments (if any), then flush */
    BLK_BARRIER, /* drain, write the segments (if any), then flush */
    BLK_DISCARD,
};

/* What the device offers: the checks refuse anything else. */
struct blk_limits {
    uint64_t sectors; /* disk size in 512-byte sectors */
    bool readonly;
    bool discard;          /* feature-discard offered */
    unsigned max_indirect; /* 0: indirect requests not offered */
};

struct blk_seg {
    uint32_t gref;
    uint8_t first, last; /* sectors within the page, inclusive */
};

struct blk_parsed {
    uint8_t op;     /* the ring operation */
    uint8_t rsp_op; /* the operation echoed in the response */
    uint64_t id;
    enum blk_kind kind;
    bool indirect;
    unsigned nseg;
    unsigned nr_indirect_pages;
    uint32_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
    uint64_t sector;
    uint64_t nr_sectors; /* discard: as requested; others: set by blk_check_segs */
    struct blk_seg direct[BLKIF_MAX_SEGMENTS_PER_REQUEST]; /* segments of a direct request */
};

/* Decode a private copy of a ring request: operation, segment count against
 * the limits, direct segments copied into p->direct. Returns BLKIF_RSP_OKAY,
 * or the status to answer with and a reason in *why. p->id and p->rsp_op are
 * set even on failure. */
int blk_decode(const struct blk_limits *l, const blkif_request_t *req, struct blk_parsed *p,
               const char **why);

/* Check segments (first <= last <= 7), add up p->nr_sectors, and check the
 * range against the disk; a write to a read-only disk is refused. */
int blk_check_segs(const struct blk_limits *l, struct blk_parsed *p, const struct blk_seg *segs,
                   const char **why);

/* Check a discard's range (after blk_decode). */
int blk_check_discard(const struct blk_limits *l, const struct blk_parsed *p, const char **why);

/* sector + nr <= disk, without overflow. */
bool blk_range_ok(uint64_t sector, uint64_t nr, uint64_t disk_sectors);

#endif
