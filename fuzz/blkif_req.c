/* blkif_req - blkback's validation of a blkif request (backends/blk/bb_check.c),
 * as bb_dispatch runs it on the private copy of a ring slot: bb_decode, then
 * bb_check_discard for a discard, else bb_check_segs over the direct segments
 * or over the segments of the indirect pages (which follow the request in the
 * input, as the frontend's granted pages would).
 *
 * Input: a limits byte (readonly, discard, indirect offered), the disk size
 * (u64), one blkif_request_t (112 bytes), then the indirect segment pages. */
#define _GNU_SOURCE
#include "bb_check.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz f = {data, size};
    uint8_t lb = fz_u8(&f);
    struct bb_limits l = {
        .sectors = fz_u64(&f),
        .readonly = lb & 1,
        .discard = lb & 2,
        /* what blkback offers (bb_publish.c): BB_MAX_INDIRECT_SEGS or none */
        .max_indirect = (lb & 4) ? BB_MAX_INDIRECT_SEGS : 0,
    };
    blkif_request_t req;
    fz_bytes(&f, &req, sizeof(req));

    struct bb_parsed p;
    const char *why = "";
    int st = bb_decode(&l, &req, &p, &why);
    FZ_CHECK(p.id == req.id);
    if (st == BLKIF_RSP_OKAY && p.kind == BB_DISCARD) {
        st = bb_check_discard(&l, &p, &why);
        if (st == BLKIF_RSP_OKAY)
            FZ_CHECK(bb_range_ok(p.sector, p.nr_sectors, l.sectors));
    } else if (st == BLKIF_RSP_OKAY) {
        struct bb_seg ind[BB_MAX_INDIRECT_SEGS];
        const struct bb_seg *segs = p.direct;
        if (p.indirect) {
            /* bb_segs_indirect: the segments copied out of the mapped pages */
            FZ_CHECK(p.nseg >= 1 && p.nseg <= BB_MAX_INDIRECT_SEGS);
            FZ_CHECK(p.nr_indirect_pages >= 1 &&
                     p.nr_indirect_pages <= BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST);
            for (unsigned i = 0; i < p.nseg; i++) {
                struct blkif_request_segment s;
                fz_bytes(&f, &s, sizeof(s));
                ind[i] =
                    (struct bb_seg){.gref = s.gref, .first = s.first_sect, .last = s.last_sect};
            }
            segs = ind;
        } else {
            FZ_CHECK(p.nseg <= BLKIF_MAX_SEGMENTS_PER_REQUEST);
        }
        st = bb_check_segs(&l, &p, segs, &why);
        if (st == BLKIF_RSP_OKAY) {
            /* what bb_dispatch relies on afterwards */
            FZ_CHECK(p.nr_sectors <= (uint64_t)p.nseg * BB_SECTORS_PER_PAGE);
            FZ_CHECK(bb_range_ok(p.sector, p.nr_sectors, l.sectors));
            FZ_CHECK(!(l.readonly && p.kind != BB_READ && p.nseg > 0));
            for (unsigned i = 0; i < p.nseg; i++)
                FZ_CHECK(segs[i].first <= segs[i].last && segs[i].last < BB_SECTORS_PER_PAGE);
        }
    }
    FZ_CHECK(st == BLKIF_RSP_OKAY || st == BLKIF_RSP_ERROR || st == BLKIF_RSP_EOPNOTSUPP);
    FZ_CHECK(st == BLKIF_RSP_OKAY || why[0]);
    return 0;
}
