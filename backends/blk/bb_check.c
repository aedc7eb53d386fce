/* bb_check.c - decoding and validation of blkif requests. */
#define _GNU_SOURCE
#include "bb_check.h"

#include <string.h>

bool bb_range_ok(uint64_t sector, uint64_t nr, uint64_t disk_sectors)
{
    return sector <= disk_sectors && nr <= disk_sectors - sector;
}

static int decode_direct(const blkif_request_t *req, struct bb_parsed *p, unsigned min_seg,
                         const char **why)
{
    p->nseg = req->nr_segments;
    if (p->nseg < min_seg || p->nseg > BLKIF_MAX_SEGMENTS_PER_REQUEST) {
        *why = "bad number of segments";
        return BLKIF_RSP_ERROR;
    }
    p->sector = req->sector_number;
    for (unsigned i = 0; i < p->nseg; i++) {
        p->direct[i].gref = req->seg[i].gref;
        p->direct[i].first = req->seg[i].first_sect;
        p->direct[i].last = req->seg[i].last_sect;
    }
    return BLKIF_RSP_OKAY;
}

static int decode_indirect(const struct bb_limits *l, const blkif_request_t *req,
                           struct bb_parsed *p, const char **why)
{
    struct blkif_request_indirect ind;
    _Static_assert(sizeof(ind) <= sizeof(*req), "indirect request fits a ring slot");
    memcpy(&ind, req, sizeof(ind));
    p->rsp_op = ind.indirect_op;
    if (!l->max_indirect) {
        *why = "indirect requests not offered";
        return BLKIF_RSP_EOPNOTSUPP;
    }
    if (ind.indirect_op != BLKIF_OP_READ && ind.indirect_op != BLKIF_OP_WRITE) {
        *why = "indirect operation is neither read nor write";
        return BLKIF_RSP_ERROR;
    }
    p->kind = ind.indirect_op == BLKIF_OP_READ ? BB_READ : BB_WRITE;
    p->indirect = true;
    p->nseg = ind.nr_segments;
    if (p->nseg == 0 || p->nseg > l->max_indirect) {
        *why = "bad number of indirect segments";
        return BLKIF_RSP_ERROR;
    }
    p->nr_indirect_pages = (p->nseg + BB_SEGS_PER_INDIRECT_PAGE - 1) / BB_SEGS_PER_INDIRECT_PAGE;
    memcpy(p->indirect_grefs, ind.indirect_grefs,
           p->nr_indirect_pages * sizeof(p->indirect_grefs[0]));
    p->sector = ind.sector_number;
    return BLKIF_RSP_OKAY;
}

int bb_decode(const struct bb_limits *l, const blkif_request_t *req, struct bb_parsed *p,
              const char **why)
{
    memset(p, 0, sizeof(*p));
    p->op = req->operation;
    p->rsp_op = req->operation;
    p->id = req->id;
    switch (req->operation) {
    case BLKIF_OP_READ:
        p->kind = BB_READ;
        return decode_direct(req, p, 1, why);
    case BLKIF_OP_WRITE:
        p->kind = BB_WRITE;
        return decode_direct(req, p, 1, why);
    case BLKIF_OP_WRITE_BARRIER:
        p->kind = BB_BARRIER;
        if (l->readonly) {
            *why = "barrier on a read-only disk";
            return BLKIF_RSP_EOPNOTSUPP;
        }
        return decode_direct(req, p, 0, why);
    case BLKIF_OP_FLUSH_DISKCACHE:
        p->kind = BB_FLUSH;
        return decode_direct(req, p, 0, why);
    case BLKIF_OP_DISCARD: {
        struct blkif_request_discard dr;
        _Static_assert(sizeof(dr) <= sizeof(*req), "discard request fits a ring slot");
        memcpy(&dr, req, sizeof(dr));
        p->kind = BB_DISCARD;
        p->sector = dr.sector_number;
        p->nr_sectors = dr.nr_sectors;
        if (!l->discard) {
            *why = "discard not offered";
            return BLKIF_RSP_EOPNOTSUPP;
        }
        return BLKIF_RSP_OKAY;
    }
    case BLKIF_OP_INDIRECT:
        return decode_indirect(l, req, p, why);
    default:
        *why = "unknown operation";
        return BLKIF_RSP_EOPNOTSUPP;
    }
}

int bb_check_segs(const struct bb_limits *l, struct bb_parsed *p, const struct bb_seg *segs,
                  const char **why)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < p->nseg; i++) {
        if (segs[i].last >= BB_SECTORS_PER_PAGE || segs[i].first > segs[i].last) {
            *why = "segment sectors outside the page (first > last or last > 7)";
            return BLKIF_RSP_ERROR;
        }
        n += segs[i].last - segs[i].first + 1u;
    }
    p->nr_sectors = n;
    if (l->readonly && p->kind != BB_READ && p->nseg > 0) {
        *why = "write to a read-only disk";
        return BLKIF_RSP_ERROR;
    }
    if (!bb_range_ok(p->sector, n, l->sectors)) {
        *why = "sectors beyond the end of the disk";
        return BLKIF_RSP_ERROR;
    }
    return BLKIF_RSP_OKAY;
}

int bb_check_discard(const struct bb_limits *l, const struct bb_parsed *p, const char **why)
{
    if (!bb_range_ok(p->sector, p->nr_sectors, l->sectors)) {
        *why = "discard beyond the end of the disk";
        return BLKIF_RSP_ERROR;
    }
    return BLKIF_RSP_OKAY;
}
