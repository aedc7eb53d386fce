/* test-sf-fence.c - T0 tests of the fence (shadow-frontends/core/sf_ranges.c,
 * sf_fence.c) and of the journal's hold (sf_journal.c): the range set's
 * overlap, merge and coarsening; the unfenced set by domain and what
 * releases it; writes held in dispatch while reads and other writes pass,
 * and held ones issued in their order once released. No Xen. */
#define _GNU_SOURCE
#include "check.h"
#include "sf_fence.h"
#include "sf_journal.h"
#include "sf_ranges.h"

#include <stdlib.h>
#include <string.h>

#define K 1024u

/* The set's ranges, as "start-end" pairs in KiB, for comparisons. */
static void show(const struct sf_ranges *s, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < s->n && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%llu-%llu", i ? " " : "",
                              (unsigned long long)(s->v[i].start / K),
                              (unsigned long long)(s->v[i].end / K));
}

static void check_ranges(const struct sf_ranges *s, const char *want)
{
    char got[256];
    show(s, got, sizeof(got));
    if (strcmp(got, want)) {
        fprintf(stderr, "ranges: got '%s', want '%s'\n", got, want);
        check_failures++;
    }
}

/* Overlap: a shared byte, not a shared edge; len 0 never overlaps. */
static void test_overlap(void)
{
    struct sf_ranges s;
    sf_ranges_init(&s);
    CHECK(sf_ranges_empty(&s));
    CHECK(!sf_ranges_overlap(&s, 0, 4 * K));
    sf_ranges_add(&s, 8 * K, 8 * K);  /* [8, 16) KiB */
    sf_ranges_add(&s, 32 * K, 4 * K); /* [32, 36) */
    CHECK(!sf_ranges_empty(&s));
    CHECK(!sf_ranges_overlap(&s, 0, 8 * K));       /* ends where it starts */
    CHECK(!sf_ranges_overlap(&s, 16 * K, 16 * K)); /* between the two, both edges */
    CHECK(sf_ranges_overlap(&s, 15 * K, 512));
    CHECK(sf_ranges_overlap(&s, 0, 8 * K + 512));
    CHECK(sf_ranges_overlap(&s, 4 * K, 64 * K)); /* covers both */
    CHECK(sf_ranges_overlap(&s, 35 * K, 1 * K));
    CHECK(!sf_ranges_overlap(&s, 36 * K, 1 * K));
    CHECK(!sf_ranges_overlap(&s, 10 * K, 0));
    CHECK(sf_ranges_overlap(&s, UINT64_MAX - 1, 2) == false); /* the end saturates */
    CHECK_EQ(sf_ranges_bytes(&s), 12 * K);
    sf_ranges_fini(&s);
    CHECK(sf_ranges_empty(&s));
}

/* Adding merges what overlaps or touches, in any order; nothing is lost. */
static void test_merge(void)
{
    struct sf_ranges s;
    sf_ranges_init(&s);
    sf_ranges_add(&s, 20 * K, 4 * K);
    sf_ranges_add(&s, 0, 4 * K);
    sf_ranges_add(&s, 10 * K, 2 * K);
    check_ranges(&s, "0-4 10-12 20-24");
    sf_ranges_add(&s, 4 * K, 2 * K); /* touches 0-4 */
    check_ranges(&s, "0-6 10-12 20-24");
    sf_ranges_add(&s, 11 * K, 10 * K); /* bridges 10-12 and 20-24 */
    check_ranges(&s, "0-6 10-24");
    sf_ranges_add(&s, 2 * K, 1 * K); /* inside */
    sf_ranges_add(&s, 0, 0);         /* nothing */
    check_ranges(&s, "0-6 10-24");
    sf_ranges_add(&s, 6 * K, 4 * K); /* fills the gap exactly */
    check_ranges(&s, "0-24");
    struct sf_ranges t;
    sf_ranges_init(&t);
    sf_ranges_add(&t, 100 * K, 4 * K);
    sf_ranges_add(&t, 24 * K, 1 * K);
    sf_ranges_merge(&s, &t);
    check_ranges(&s, "0-25 100-104");
    sf_ranges_fini(&t);
    sf_ranges_fini(&s);
}

/* Past SF_RANGES_MAX the set grows coarser, never smaller: every range
 * added still overlaps, and the closest neighbours were the ones merged. */
static void test_coarsen(void)
{
    struct sf_ranges s;
    sf_ranges_init(&s);
    /* Ranges of 1 KiB every 4 KiB (gaps of 3 KiB), but the 100th only
     * 1 KiB after the 99th. */
    for (unsigned i = 0; i < SF_RANGES_MAX; i++)
        sf_ranges_add(&s, i == 100 ? 398 * K : (uint64_t)i * 4 * K, K);
    CHECK_EQ(s.n, SF_RANGES_MAX);
    CHECK(!sf_ranges_overlap(&s, 397 * K, K));
    uint64_t far = (uint64_t)SF_RANGES_MAX * 8 * K;
    sf_ranges_add(&s, far, K);
    CHECK_EQ(s.n, SF_RANGES_MAX);
    CHECK(!s.all);
    for (unsigned i = 0; i < SF_RANGES_MAX; i++)
        CHECK(sf_ranges_overlap(&s, i == 100 ? 398 * K : (uint64_t)i * 4 * K, K));
    CHECK(sf_ranges_overlap(&s, far, K));
    /* The closest pair was merged with its gap; the other gaps are kept. */
    CHECK(sf_ranges_overlap(&s, 397 * K, K));
    CHECK(!sf_ranges_overlap(&s, 1 * K, 3 * K));
    CHECK(!sf_ranges_overlap(&s, 399 * K, 5 * K));
    CHECK_EQ(sf_ranges_bytes(&s), (uint64_t)(SF_RANGES_MAX + 2) * K);
    sf_ranges_fini(&s);
}

/* The unfenced set: per domain, released by the key past the generation
 * each domain served at, by the domain gone, by a reconnect to it. */
static void test_fence_sets(void)
{
    struct sf_fence f;
    sff_init(&f);
    CHECK(sff_empty(&f));
    sff_add(&f, 3, 0, 0, 64 * K); /* domain 3 served at generation 0 */
    sff_add(&f, 3, 0, 1024 * K, 4 * K);
    sff_add(&f, 3, 0, 64 * K, 0); /* empty: nothing */
    CHECK_EQ(f.n, 1);
    sff_add(&f, 5, 1, 512 * K, 4 * K); /* then 5, at generation 1 */
    CHECK_EQ(f.n, 2);
    CHECK(sff_holds(&f, 60 * K, 8 * K));
    CHECK(sff_holds(&f, 514 * K, 1 * K));
    CHECK(!sff_holds(&f, 64 * K, 64 * K));
    CHECK_EQ(sff_bytes(&f), 72 * K);
    /* fenced=1: backends before generation 1 - domain 3 - are fenced. */
    CHECK_EQ(sff_release_fenced(&f, 0), 0);
    CHECK_EQ(sff_release_fenced(&f, 1), 1);
    CHECK(!sff_holds(&f, 0, 64 * K));
    CHECK(sff_holds(&f, 512 * K, 4 * K));
    CHECK_EQ(f.n, 1);
    CHECK_EQ(f.s[0].domid, 5);
    /* A reconnect to another domain releases nothing; to domain 5, its set. */
    CHECK_EQ(sff_release_domain(&f, 7), 0);
    CHECK_EQ(sff_release_domain(&f, 5), 1);
    CHECK(sff_empty(&f));
    /* A domain failing again at a later generation: the later one counts. */
    sff_add(&f, 9, 2, 0, 4 * K);
    sff_add(&f, 9, 4, 8 * K, 4 * K);
    CHECK_EQ(f.n, 1);
    CHECK_EQ(sff_release_fenced(&f, 4), 0);
    CHECK(sff_holds(&f, 0, 4 * K) && sff_holds(&f, 8 * K, 4 * K));
    CHECK_EQ(sff_release_fenced(&f, 5), 1);
    /* More domains than sets: the last stands for several, and only the
     * key past all of them releases it. */
    for (unsigned d = 1; d <= SFF_DOMS + 2; d++)
        sff_add(&f, d, d, d * 100 * K, 4 * K);
    CHECK_EQ(f.n, SFF_DOMS);
    CHECK(f.s[SFF_DOMS - 1].several);
    for (unsigned d = 1; d <= SFF_DOMS + 2; d++)
        CHECK(sff_holds(&f, d * 100 * K, 4 * K));
    CHECK_EQ(sff_release_domain(&f, SFF_DOMS), 0); /* folded: not by its domain */
    CHECK_EQ(sff_release_domain(&f, 1), 1);
    CHECK_EQ(sff_release_fenced(&f, SFF_DOMS + 2), SFF_DOMS - 2);
    CHECK(sff_holds(&f, (SFF_DOMS + 2) * 100 * K, 4 * K));
    CHECK_EQ(sff_release_fenced(&f, SFF_DOMS + 3), 1);
    CHECK(sff_empty(&f));
    sff_fini(&f);
}

/* ---- the journal's hold ---- */

struct fake {
    struct sfj_entry *issued[32];
    unsigned nissued;
};

static int fake_issue(void *arg, struct sfj_entry *e, int *status)
{
    struct fake *f = arg;
    (void)status;
    if (f->nissued < 32)
        f->issued[f->nissued++] = e;
    return 0;
}

static void fake_done(void *arg, void *owner, struct sfj_entry *e, int status)
{
    (void)arg;
    (void)owner;
    (void)e;
    (void)status;
}

static bool hold_by_fence(void *arg, const struct sfj_entry *e)
{
    return sff_holds(arg, e->start, e->len);
}

static struct sfj_entry *submit(struct sfj *j, uint32_t flags, uint64_t start, uint64_t len)
{
    struct sfj_entry *e = sfj_entry_new(flags, 1, start, len);
    e->owner = e;
    sfj_submit(j, e);
    return e;
}

static unsigned issued_at(const struct fake *f, const struct sfj_entry *e)
{
    for (unsigned i = 0; i < f->nissued; i++)
        if (f->issued[i] == e)
            return i + 1;
    return 0;
}

static void add_exposed(void *arg, const struct sfj_entry *e)
{
    sff_add(arg, 3, 0, e->start, e->len);
}

/* A backend dies with a write in flight and one retained: both are
 * exposed, replayed and held; a read of their sectors waits behind them,
 * other reads and writes go; the counts say what waits for the fence; once
 * released they go in their order. */
static void test_journal_hold(void)
{
    struct sfj j;
    struct fake f = {0};
    struct sf_fence fence;
    sff_init(&fence);
    sfj_init(&j, 0);
    sfj_set_hold(&j, hold_by_fence, &fence);
    CHECK(sfj_set_conn(&j, 32, true) == 0);
    const uint32_t W = SFJ_MODIFIES | SFJ_DATA;
    struct sfj_entry *wa = submit(&j, W, 0, 4 * K);
    struct sfj_entry *wb = submit(&j, W, 64 * K, 4 * K);
    struct sfj_entry *rx = submit(&j, SFJ_DATA, 128 * K, 4 * K);
    sfj_dispatch(&j, 10, fake_issue, fake_done, &f);
    CHECK_EQ(f.nissued, 3);
    sfj_complete(&j, wa, 0, fake_done, NULL); /* retained */
    /* The fault: wb in flight and wa retained are what it may still write;
     * the read in flight is not. */
    sfj_visit_exposed(&j, add_exposed, &fence);
    CHECK(sff_holds(&fence, 0, 4 * K) && sff_holds(&fence, 64 * K, 4 * K));
    CHECK(!sff_holds(&fence, 128 * K, 4 * K));
    CHECK_EQ(sfj_requeue(&j), 3);
    /* New requests while down: a write over wa (newer data), a read of wb's
     * sectors, a write elsewhere, a flush. */
    struct sfj_entry *wa2 = submit(&j, W, 0, 4 * K);
    struct sfj_entry *rb = submit(&j, SFJ_DATA, 64 * K, 4 * K);
    struct sfj_entry *wc = submit(&j, W, 256 * K, 4 * K);
    struct sfj_entry *fl = submit(&j, SFJ_FLUSH, 0, 0);
    CHECK(sfj_set_conn(&j, 32, true) == 0);
    f.nissued = 0;
    sfj_dispatch(&j, 20, fake_issue, fake_done, &f);
    /* The replayed read and the other write go; everything over the fenced
     * sectors and the flush wait. */
    CHECK(issued_at(&f, rx) && issued_at(&f, wc));
    CHECK(!issued_at(&f, wa) && !issued_at(&f, wb) && !issued_at(&f, wa2));
    CHECK(!issued_at(&f, rb) && !issued_at(&f, fl));
    CHECK_EQ(f.nissued, 2);
    CHECK_EQ(j.held, 5); /* wa, wb; behind them wa2, rb and the flush */
    CHECK_EQ(j.held_oldest, 20);
    CHECK(wa->blocked && wb->blocked && wa2->blocked && rb->blocked);
    CHECK_EQ(j.held_replay, 2); /* wa, wb; rx is in flight */
    sfj_complete(&j, rx, 0, fake_done, NULL);
    sfj_complete(&j, wc, 0, fake_done, NULL);
    f.nissued = 0;
    sfj_dispatch(&j, 30, fake_issue, fake_done, &f);
    CHECK_EQ(f.nissued, 0);
    CHECK_EQ(j.held_oldest, 20); /* still the first hold's time */
    /* Fenced: the held writes go in their order, the read after wb. */
    CHECK_EQ(sff_release_fenced(&fence, 1), 1);
    sfj_dispatch(&j, 40, fake_issue, fake_done, &f);
    CHECK(issued_at(&f, wa) == 1 && issued_at(&f, wb) == 2);
    CHECK(!issued_at(&f, wa2) && !issued_at(&f, rb)); /* behind wa, wb in flight */
    CHECK_EQ(j.held, 0);
    CHECK_EQ(j.held_replay, 0);
    sfj_complete(&j, wa, 0, fake_done, NULL);
    sfj_complete(&j, wb, 0, fake_done, NULL);
    sfj_dispatch(&j, 50, fake_issue, fake_done, &f);
    CHECK(issued_at(&f, wa2) && issued_at(&f, rb) && !issued_at(&f, fl));
    sfj_complete(&j, wa2, 0, fake_done, NULL);
    sfj_complete(&j, rb, 0, fake_done, NULL);
    sfj_dispatch(&j, 60, fake_issue, fake_done, &f);
    CHECK(issued_at(&f, fl));
    sfj_complete(&j, fl, 0, fake_done, NULL);
    CHECK_EQ(j.n_queue, 0);
    CHECK_EQ(j.n_retained, 0);
    sfj_fini(&j);
    sff_fini(&fence);
}

int main(void)
{
    test_overlap();
    test_merge();
    test_coarsen();
    test_fence_sets();
    test_journal_hold();
    return check_done("test-sf-fence");
}
