/* bb_check_test - blkif request decoding and validation (bb_check.c):
 * every rule that keeps a request inside the disk and its pages. */
#define _GNU_SOURCE
#include "bb_check.h"
#include "check.h"

#include <stdint.h>
#include <string.h>

static const struct bb_limits L = {
    .sectors = 2048, .readonly = false, .discard = true, .max_indirect = BB_MAX_INDIRECT_SEGS};

static blkif_request_t rw(uint8_t op, uint64_t sector, unsigned nseg)
{
    blkif_request_t r;
    memset(&r, 0, sizeof(r));
    r.operation = op;
    r.id = 0x1234;
    r.sector_number = sector;
    r.nr_segments = (uint8_t)nseg;
    for (unsigned i = 0; i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++) {
        r.seg[i].gref = 100 + i;
        r.seg[i].first_sect = 0;
        r.seg[i].last_sect = 7;
    }
    return r;
}

/* Decode then check segments: the status a request gets. */
static int status_of(const struct bb_limits *l, const blkif_request_t *req, struct bb_parsed *p)
{
    const char *why = NULL;
    int st = bb_decode(l, req, p, &why);
    if (st != BLKIF_RSP_OKAY) {
        CHECK(why != NULL);
        return st;
    }
    if (p->kind == BB_DISCARD)
        return bb_check_discard(l, p, &why);
    if (p->indirect)
        return st; /* segments come from the indirect pages */
    return bb_check_segs(l, p, p->direct, &why);
}

static void test_rw(void)
{
    struct bb_parsed p;
    blkif_request_t r = rw(BLKIF_OP_READ, 0, 11);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_OKAY);
    CHECK_EQ(p.nr_sectors, 88);
    CHECK_EQ(p.id, 0x1234);
    CHECK_EQ(p.rsp_op, BLKIF_OP_READ);

    r = rw(BLKIF_OP_WRITE, 2048 - 8, 1); /* the last page */
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_OKAY);
    r = rw(BLKIF_OP_WRITE, 2048 - 7, 1); /* one sector past the end */
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    r = rw(BLKIF_OP_WRITE, 2048, 1);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    r = rw(BLKIF_OP_WRITE, UINT64_MAX - 3, 1); /* wraps */
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);

    r = rw(BLKIF_OP_READ, 0, 0);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    r = rw(BLKIF_OP_READ, 0, 12);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    r = rw(BLKIF_OP_READ, 0, 255);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);

    r = rw(BLKIF_OP_READ, 0, 2);
    r.seg[1].first_sect = 3;
    r.seg[1].last_sect = 2;
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    r.seg[1].first_sect = 0;
    r.seg[1].last_sect = 8;
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    r.seg[1].first_sect = 7;
    r.seg[1].last_sect = 7; /* a one-sector sub-page segment */
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_OKAY);
    CHECK_EQ(p.nr_sectors, 9);
}

static void test_ops(void)
{
    struct bb_parsed p;
    blkif_request_t r = rw(99, 0, 1);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_EOPNOTSUPP);
    CHECK_EQ(p.rsp_op, 99);
    r = rw(BLKIF_OP_RESERVED_1, 0, 1);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_EOPNOTSUPP);

    r = rw(BLKIF_OP_FLUSH_DISKCACHE, 0, 0);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_OKAY);
    CHECK_EQ(p.kind, BB_FLUSH);
    r = rw(BLKIF_OP_WRITE_BARRIER, 0, 0);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_OKAY);
    CHECK_EQ(p.kind, BB_BARRIER);
    r = rw(BLKIF_OP_WRITE_BARRIER, 0, 12);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
}

static void test_readonly(void)
{
    struct bb_limits ro = L;
    ro.readonly = true;
    ro.discard = false;
    struct bb_parsed p;
    blkif_request_t r = rw(BLKIF_OP_WRITE, 0, 1);
    CHECK_EQ(status_of(&ro, &r, &p), BLKIF_RSP_ERROR);
    r = rw(BLKIF_OP_READ, 0, 1);
    CHECK_EQ(status_of(&ro, &r, &p), BLKIF_RSP_OKAY);
    r = rw(BLKIF_OP_WRITE_BARRIER, 0, 0);
    CHECK_EQ(status_of(&ro, &r, &p), BLKIF_RSP_EOPNOTSUPP);
    r = rw(BLKIF_OP_FLUSH_DISKCACHE, 0, 0);
    CHECK_EQ(status_of(&ro, &r, &p), BLKIF_RSP_OKAY);
    r = rw(BLKIF_OP_FLUSH_DISKCACHE, 0, 1); /* a flush carrying data is a write */
    CHECK_EQ(status_of(&ro, &r, &p), BLKIF_RSP_ERROR);
}

static blkif_request_t discard(uint64_t sector, uint64_t n)
{
    struct blkif_request_discard d;
    memset(&d, 0, sizeof(d));
    d.operation = BLKIF_OP_DISCARD;
    d.id = 7;
    d.sector_number = sector;
    d.nr_sectors = n;
    blkif_request_t r;
    memset(&r, 0, sizeof(r));
    memcpy(&r, &d, sizeof(d));
    return r;
}

static void test_discard(void)
{
    struct bb_parsed p;
    blkif_request_t r = discard(0, 2048);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_OKAY);
    CHECK_EQ(p.nr_sectors, 2048);
    r = discard(1, 2048);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    r = discard(10, UINT64_MAX - 5);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    struct bb_limits nod = L;
    nod.discard = false;
    r = discard(0, 8);
    CHECK_EQ(status_of(&nod, &r, &p), BLKIF_RSP_EOPNOTSUPP);
}

static blkif_request_t indirect(uint8_t op, unsigned nseg)
{
    struct blkif_request_indirect ir;
    memset(&ir, 0, sizeof(ir));
    ir.operation = BLKIF_OP_INDIRECT;
    ir.indirect_op = op;
    ir.nr_segments = (uint16_t)nseg;
    ir.id = 9;
    for (unsigned i = 0; i < BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST; i++)
        ir.indirect_grefs[i] = 500 + i;
    blkif_request_t r;
    memcpy(&r, &ir, sizeof(ir));
    return r;
}

static void test_indirect(void)
{
    struct bb_parsed p;
    blkif_request_t r = indirect(BLKIF_OP_WRITE, 256);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_OKAY);
    CHECK(p.indirect);
    CHECK_EQ(p.nseg, 256);
    CHECK_EQ(p.nr_indirect_pages, 1);
    CHECK_EQ(p.indirect_grefs[0], 500);
    CHECK_EQ(p.rsp_op, BLKIF_OP_WRITE);
    r = indirect(BLKIF_OP_WRITE, 257);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    r = indirect(BLKIF_OP_WRITE, 0);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    r = indirect(BLKIF_OP_FLUSH_DISKCACHE, 8);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_ERROR);
    struct bb_limits noind = L;
    noind.max_indirect = 0;
    r = indirect(BLKIF_OP_READ, 8);
    CHECK_EQ(status_of(&noind, &r, &p), BLKIF_RSP_EOPNOTSUPP);

    /* Segments from an indirect page are checked like direct ones. */
    r = indirect(BLKIF_OP_READ, 3);
    CHECK_EQ(status_of(&L, &r, &p), BLKIF_RSP_OKAY);
    struct bb_seg segs[3] = {{1, 0, 7}, {2, 0, 7}, {3, 2, 9}};
    const char *why;
    CHECK_EQ(bb_check_segs(&L, &p, segs, &why), BLKIF_RSP_ERROR);
    segs[2].last = 4;
    CHECK_EQ(bb_check_segs(&L, &p, segs, &why), BLKIF_RSP_OKAY);
    CHECK_EQ(p.nr_sectors, 19);
}

static void test_range(void)
{
    CHECK(bb_range_ok(0, 0, 0));
    CHECK(bb_range_ok(10, 0, 10));
    CHECK(!bb_range_ok(11, 0, 10));
    CHECK(bb_range_ok(0, 10, 10));
    CHECK(!bb_range_ok(1, 10, 10));
    CHECK(!bb_range_ok(UINT64_MAX, 2, UINT64_MAX));
    CHECK(bb_range_ok(UINT64_MAX - 1, 1, UINT64_MAX));
}

int main(void)
{
    test_rw();
    test_ops();
    test_readonly();
    test_discard();
    test_indirect();
    test_range();
    return check_done("bb_check_test");
}
