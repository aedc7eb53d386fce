/* bb_check.h - decoding and validation of blkif requests, pure functions
 * over a private copy of the request (never the shared ring). Every check
 * that keeps a request inside the disk and inside its pages is here.
 */
#ifndef BB_CHECK_H
#define BB_CHECK_H

#include "xen_barriers.h"

#include <stdbool.h>
#include <stdint.h>
#include <xen/io/blkif.h>

#define BB_SECTOR_SIZE      512u
#define BB_PAGE_SIZE        4096u
#define BB_SECTORS_PER_PAGE (BB_PAGE_SIZE / BB_SECTOR_SIZE)
/* Segments per indirect request we accept (feature-max-indirect-segments). */
#define BB_MAX_INDIRECT_SEGS      256u
#define BB_SEGS_PER_INDIRECT_PAGE (BB_PAGE_SIZE / sizeof(struct blkif_request_segment))

enum bb_kind {
    BB_READ,
    BB_WRITE,
    BB_FLUSH,   /* write the segments (if any), then flush */
    BB_BARRIER, /* drain, write the segments (if any), then flush */
    BB_DISCARD,
};

/* What the device offers: the checks refuse anything else. */
struct bb_limits {
    uint64_t sectors; /* disk size in 512-byte sectors */
    bool readonly;
    bool discard;          /* feature-discard offered */
    unsigned max_indirect; /* 0: indirect requests not offered */
};

struct bb_seg {
    uint32_t gref;
    uint8_t first, last; /* sectors within the page, inclusive */
};

struct bb_parsed {
    uint8_t op;     /* the ring operation */
    uint8_t rsp_op; /* the operation echoed in the response */
    uint64_t id;
    enum bb_kind kind;
    bool indirect;
    unsigned nseg;
    unsigned nr_indirect_pages;
    uint32_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
    uint64_t sector;
    uint64_t nr_sectors; /* discard: as requested; others: set by bb_check_segs */
    struct bb_seg direct[BLKIF_MAX_SEGMENTS_PER_REQUEST]; /* segments of a direct request */
};

/* Decode a private copy of a ring request: operation, segment count against
 * the limits, direct segments copied into p->direct. Returns BLKIF_RSP_OKAY,
 * or the status to answer with and a reason in *why. p->id and p->rsp_op are
 * set even on failure. */
int bb_decode(const struct bb_limits *l, const blkif_request_t *req, struct bb_parsed *p,
              const char **why);

/* Check segments (first <= last <= 7), add up p->nr_sectors, and check the
 * range against the disk; a write to a read-only disk is refused. */
int bb_check_segs(const struct bb_limits *l, struct bb_parsed *p, const struct bb_seg *segs,
                  const char **why);

/* Check a discard's range (after bb_decode). */
int bb_check_discard(const struct bb_limits *l, const struct bb_parsed *p, const char **why);

/* sector + nr <= disk, without overflow. */
bool bb_range_ok(uint64_t sector, uint64_t nr, uint64_t disk_sectors);

#endif
