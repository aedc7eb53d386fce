/* bb_pass.c - one ring pass: the requests bb_ring_consume took together, in
 * ring order, from accepted to started.
 *
 * Each grant map is a call into the grant device (on xensim a round trip to
 * the daemon), and a fresh connection's first requests find no page cached:
 * mapped one page at a time, the first replay after a hot standby's
 * promotion (some 500 pages) waited hundreds of milliseconds. So a pass maps
 * in three steps: the indirect segment pages of all its requests in one call,
 * then every persistent grant not cached in BB_PG_BATCH refs a call, then
 * what is left outside the cache, one call per request. A ref that cannot be
 * mapped fails the requests that use it, nothing else.
 */
#define _GNU_SOURCE
#include "bb.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Read the indirect requests' segments, BB_IND_BATCH pages a call. */
static void read_indirect_batched(struct bb_req **v, unsigned n)
{
    struct bb_req *chunk[BB_IND_BATCH];
    unsigned k = 0, pages = 0;
    /* One request holds at most BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST pages,
     * fewer than BB_IND_BATCH, so each chunk holds at least one. */
    for (unsigned i = 0; i <= n; i++) {
        struct bb_req *r = i < n ? v[i] : NULL;
        if (r && !r->p.indirect)
            continue;
        if (k && (!r || pages + r->p.nr_indirect_pages > BB_IND_BATCH)) {
            bb_segs_indirect_batch(chunk, k); /* on failure, read one by one below */
            k = pages = 0;
        }
        if (r) {
            chunk[k++] = r;
            pages += r->p.nr_indirect_pages;
        }
    }
}

/* Step 1: indirect segments read and checked. Returns the requests left. */
static unsigned read_indirect(struct bb_queue *q, struct bb_req **v, unsigned n)
{
    read_indirect_batched(v, n);
    unsigned m = 0;
    for (unsigned i = 0; i < n; i++) {
        struct bb_req *r = v[i];
        if (r->p.indirect) {
            const char *why = "";
            int st = r->segs ? BLKIF_RSP_OKAY : bb_segs_indirect(r, &why);
            if (st == BLKIF_RSP_OKAY)
                st = bb_check_segs(&q->d->lim, &r->p, r->segs, &why);
            if (st != BLKIF_RSP_OKAY) {
                bb_refuse(r, st, why);
                continue;
            }
        }
        v[m++] = r;
    }
    return m;
}

static bool has_pages(const struct bb_req *r)
{
    return r->p.kind != BB_DISCARD && r->p.nseg > 0;
}

static void refuse_map(struct bb_req *r, uint32_t bad_gref)
{
    char msg[96];
    if (bad_gref != UINT32_MAX)
        snprintf(msg, sizeof(msg), "grant ref %" PRIu32 " cannot be mapped", bad_gref);
    else
        snprintf(msg, sizeof(msg), "mapping its grants failed: %s", strerror(errno));
    bb_refuse(r, BLKIF_RSP_ERROR, msg);
}

void bb_pass_run(struct bb_queue *q, struct bb_req **v, unsigned n)
{
    if (!n)
        return;
    uint64_t last = bb_now_ns();
    n = read_indirect(q, v, n);
    /* Step 2: every persistent entry taken, then the pending ones mapped. */
    unsigned m = 0;
    for (unsigned i = 0; i < n; i++) {
        struct bb_req *r = v[i];
        if (has_pages(r) && bb_segs_take(r) < 0) {
            refuse_map(r, UINT32_MAX);
            continue;
        }
        v[m++] = r;
    }
    if (q->pgc)
        bb_pgcache_fill(q->pgc);
    /* Step 3: each request's pages, then run, in ring order. A slow pass
     * answers as it goes, so the first answers do not wait for the last
     * request (the ones answered are never in v[i + 1..]). */
    for (unsigned i = 0; i < m; i++) {
        struct bb_req *r = v[i];
        uint32_t bad;
        if (has_pages(r) && bb_segs_map(r, &bad) < 0)
            refuse_map(r, bad);
        else
            bb_start(r);
        if (i + 1 < m && bb_now_ns() - last >= BB_PASS_ANSWER_NS) {
            bb_answer(q->d);
            last = bb_now_ns();
        }
    }
}
