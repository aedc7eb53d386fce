/* tbad.c - malformed blkif requests. Each kind breaks one rule. */
#define _GNU_SOURCE
#include "tbad.h"

#include <string.h>

const char *const tbad_kinds[] = {
    "op-unknown",       "op-reserved",       "nseg-zero",
    "nseg-12",          "nseg-255",          "first-gt-last",
    "last-8",           "beyond-end",        "straddle-end",
    "sector-overflow",  "bad-gref",          "bad-gref-mixed",
    "indirect-nseg0",   "indirect-too-many", "indirect-bad-page",
    "indirect-bad-seg", "indirect-bad-op",   "discard-beyond",
    "discard-overflow", "flush-bad-seg",     NULL,
};

static void seg(blkif_request_t *r, unsigned i, uint32_t gref, unsigned first, unsigned last)
{
    r->seg[i].gref = gref;
    r->seg[i].first_sect = (uint8_t)first;
    r->seg[i].last_sect = (uint8_t)last;
}

/* An unmistakably wrong grant ref: far above any the frontend has handed out. */
#define BOGUS_GREF 0x7ffff0u

static void indirect(struct tf *t, blkif_request_t *req, uint8_t op, uint16_t nseg, uint64_t base,
                     uint32_t page_gref)
{
    struct blkif_request_indirect ir;
    memset(&ir, 0, sizeof(ir));
    ir.operation = BLKIF_OP_INDIRECT;
    ir.indirect_op = op;
    ir.nr_segments = nseg;
    ir.sector_number = base;
    ir.indirect_grefs[0] = page_gref;
    struct blkif_request_segment *s = (void *)t->ind;
    for (unsigned i = 0; i < TF_PAGE / sizeof(*s); i++) {
        s[i].gref = t->data_refs[i % TF_DATA_PAGES];
        s[i].first_sect = 0;
        s[i].last_sect = 7;
    }
    memcpy(req, &ir, sizeof(ir));
}

static void discard(blkif_request_t *req, uint64_t sector, uint64_t n)
{
    struct blkif_request_discard d;
    memset(&d, 0, sizeof(d));
    d.operation = BLKIF_OP_DISCARD;
    d.sector_number = sector;
    d.nr_sectors = n;
    memcpy(req, &d, sizeof(d));
}

int tbad_send(struct tf *t, const char *kind, uint64_t base, int *want)
{
    blkif_request_t req;
    memset(&req, 0, sizeof(req));
    uint32_t g = t->data_refs[0];
    req.operation = BLKIF_OP_WRITE;
    req.sector_number = base;
    req.nr_segments = 1;
    seg(&req, 0, g, 0, 7);
    *want = BLKIF_RSP_ERROR;
    if (!strcmp(kind, "op-unknown")) {
        req.operation = 99;
        *want = BLKIF_RSP_EOPNOTSUPP;
    } else if (!strcmp(kind, "op-reserved")) {
        req.operation = BLKIF_OP_RESERVED_1;
        *want = BLKIF_RSP_EOPNOTSUPP;
    } else if (!strcmp(kind, "nseg-zero")) {
        req.nr_segments = 0;
    } else if (!strcmp(kind, "nseg-12")) {
        req.nr_segments = 12;
        for (unsigned i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++)
            seg(&req, i, g, 0, 7);
    } else if (!strcmp(kind, "nseg-255")) {
        req.nr_segments = 255;
    } else if (!strcmp(kind, "first-gt-last")) {
        seg(&req, 0, g, 5, 2);
    } else if (!strcmp(kind, "last-8")) {
        seg(&req, 0, g, 0, 8);
    } else if (!strcmp(kind, "beyond-end")) {
        req.sector_number = t->sectors;
    } else if (!strcmp(kind, "straddle-end")) {
        req.sector_number = t->sectors - 4; /* 8 sectors: half inside */
    } else if (!strcmp(kind, "sector-overflow")) {
        req.sector_number = UINT64_MAX - 3; /* + 8 wraps to 4 */
    } else if (!strcmp(kind, "bad-gref")) {
        seg(&req, 0, BOGUS_GREF, 0, 7);
    } else if (!strcmp(kind, "bad-gref-mixed")) {
        req.nr_segments = 3;
        seg(&req, 1, BOGUS_GREF, 0, 7);
        seg(&req, 2, t->data_refs[2], 0, 7);
    } else if (!strcmp(kind, "indirect-nseg0")) {
        indirect(t, &req, BLKIF_OP_WRITE, 0, base, t->ind_refs[0]);
    } else if (!strcmp(kind, "indirect-too-many")) {
        indirect(t, &req, BLKIF_OP_WRITE, (uint16_t)(t->max_indirect + 1), base, t->ind_refs[0]);
    } else if (!strcmp(kind, "indirect-bad-page")) {
        indirect(t, &req, BLKIF_OP_WRITE, 16, base, BOGUS_GREF);
    } else if (!strcmp(kind, "indirect-bad-seg")) {
        indirect(t, &req, BLKIF_OP_WRITE, 16, base, t->ind_refs[0]);
        ((struct blkif_request_segment *)t->ind)[9].last_sect = 9;
    } else if (!strcmp(kind, "indirect-bad-op")) {
        indirect(t, &req, BLKIF_OP_FLUSH_DISKCACHE, 16, base, t->ind_refs[0]);
    } else if (!strcmp(kind, "discard-beyond")) {
        discard(&req, t->sectors - 1, 2);
    } else if (!strcmp(kind, "discard-overflow")) {
        discard(&req, base, UINT64_MAX - base + 2);
    } else if (!strcmp(kind, "flush-bad-seg")) {
        req.operation = BLKIF_OP_FLUSH_DISKCACHE;
        seg(&req, 0, g, 7, 6);
    } else {
        return -101;
    }
    /* Data the backend must never write, if it were to write anything. */
    memset(t->data, 0xEE, (size_t)16 * TF_PAGE);
    return tf_roundtrip(t, 0, &req);
}
