/* test-sf-journal.c - T0 tests of the shadow frontend journal
 * (shadow-frontends/core/sf_journal.c): dispatch order around overlaps,
 * flushes and barriers, retention and its bound, replay order after a
 * lost connection, splitting, and the failure path. No Xen. */
#define _GNU_SOURCE
#include "check.h"
#include "sf_journal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 1024u

/* The fake class: records what was issued, can refuse or complete inline. */
struct fake {
    struct sfj_entry *issued[64];
    unsigned nissued;
    int refuse_after; /* -1: never */
    int inline_done;  /* complete every entry at issue with this status+1 (0: never) */
    unsigned done_calls;
    void *done_owner[64];
    int done_status[64];
};

static int fake_issue(void *arg, struct sfj_entry *e, int *status)
{
    struct fake *f = arg;
    if (f->refuse_after >= 0 && (int)f->nissued >= f->refuse_after)
        return -1;
    if (f->inline_done) {
        *status = f->inline_done - 1;
        return 1;
    }
    f->issued[f->nissued++] = e;
    return 0;
}

static void fake_done(void *arg, void *owner, struct sfj_entry *e, int status)
{
    struct fake *f = arg;
    (void)e;
    if (f->done_calls < 64) {
        f->done_owner[f->done_calls] = owner;
        f->done_status[f->done_calls] = status;
    }
    f->done_calls++;
}

static void fake_reset(struct fake *f)
{
    memset(f, 0, sizeof(*f));
    f->refuse_after = -1;
}

static struct sfj_entry *wr(struct sfj *j, uint64_t start, uint64_t len, unsigned char fill)
{
    struct sfj_entry *e = sfj_entry_new(SFJ_MODIFIES | SFJ_DATA, 2, start, len);
    e->data = malloc(len);
    memset(e->data, fill, len);
    e->data_owned = true;
    e->owner = e; /* any non-NULL cookie */
    sfj_submit(j, e);
    return e;
}

static struct sfj_entry *rd(struct sfj *j, uint64_t start, uint64_t len)
{
    struct sfj_entry *e = sfj_entry_new(SFJ_DATA, 1, start, len);
    e->owner = e;
    sfj_submit(j, e);
    return e;
}

static struct sfj_entry *fl(struct sfj *j, uint32_t extra)
{
    struct sfj_entry *e = sfj_entry_new(SFJ_FLUSH | extra, 3, 0, 0);
    e->owner = e;
    sfj_submit(j, e);
    return e;
}

static bool was_issued(const struct fake *f, const struct sfj_entry *e)
{
    for (unsigned i = 0; i < f->nissued; i++)
        if (f->issued[i] == e)
            return true;
    return false;
}

static void dispatch(struct sfj *j, struct fake *f)
{
    sfj_dispatch(j, 100, fake_issue, fake_done, f);
}

static void complete(struct sfj *j, struct fake *f, struct sfj_entry *e, int status)
{
    CHECK(e->state == SFJ_INFLIGHT);
    sfj_complete(j, e, status, fake_done, f);
}

/* Overlapping entries keep their order; disjoint ones go together. */
static void test_overlap_order(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 0);
    CHECK(sfj_set_conn(&j, 32, true) == 0);
    struct sfj_entry *w1 = wr(&j, 0, 4 * K, 1);
    struct sfj_entry *w2 = wr(&j, 8 * K, 4 * K, 2);
    struct sfj_entry *r1 = rd(&j, 2 * K, 4 * K); /* overlaps w1 */
    struct sfj_entry *r2 = rd(&j, 16 * K, 4 * K);
    struct sfj_entry *w3 = wr(&j, 16 * K, 512, 3); /* overlaps r2: waits for it */
    dispatch(&j, &f);
    CHECK(was_issued(&f, w1) && was_issued(&f, w2) && was_issued(&f, r2));
    CHECK(!was_issued(&f, r1) && !was_issued(&f, w3));
    CHECK(f.nissued == 3);
    complete(&j, &f, w1, 0);
    complete(&j, &f, r2, 0);
    dispatch(&j, &f);
    CHECK(was_issued(&f, r1) && was_issued(&f, w3));
    CHECK(j.n_retained == 1 && j.retained_bytes == 4 * K);
    sfj_fini(&j);
}

/* A flush goes only after every earlier write completed and covers exactly
 * the writes acknowledged before it was issued. */
static void test_flush_covers(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 0);
    sfj_set_conn(&j, 32, true);
    struct sfj_entry *w1 = wr(&j, 0, 4 * K, 1);
    struct sfj_entry *w2 = wr(&j, 4 * K, 4 * K, 2);
    struct sfj_entry *f1 = fl(&j, 0);
    struct sfj_entry *w3 = wr(&j, 8 * K, 4 * K, 3);
    struct sfj_entry *r1 = rd(&j, 100 * K, 4 * K);
    dispatch(&j, &f);
    CHECK(was_issued(&f, w1) && was_issued(&f, w2) && was_issued(&f, w3) && was_issued(&f, r1));
    CHECK(!was_issued(&f, f1));
    complete(&j, &f, w1, 0);
    dispatch(&j, &f);
    CHECK(!was_issued(&f, f1));
    complete(&j, &f, w3, 0); /* later than the flush, acknowledged before it is issued */
    complete(&j, &f, w2, 0);
    dispatch(&j, &f);
    CHECK(was_issued(&f, f1));
    struct sfj_entry *w4 = wr(&j, 12 * K, 4 * K, 4);
    dispatch(&j, &f);
    complete(&j, &f, w4, 0); /* acknowledged while the flush is in flight: not covered */
    CHECK(j.n_retained == 4);
    complete(&j, &f, f1, 0);
    CHECK(j.n_retained == 1 && j.retained_bytes == 4 * K);
    CHECK(j.released == 3);
    /* A failed flush releases nothing. */
    struct sfj_entry *f2 = fl(&j, 0);
    dispatch(&j, &f);
    complete(&j, &f, f2, 5);
    CHECK(j.n_retained == 1);
    complete(&j, &f, r1, 0);
    sfj_fini(&j);
}

/* Replay after a lost connection: retained writes first in ack order, then
 * the outstanding requests in their original order, and the dispatch
 * ordering still holds for the new connection. */
static void test_replay_order(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 0);
    sfj_set_conn(&j, 32, true);
    struct sfj_entry *wa = wr(&j, 0, 4 * K, 0xa);
    struct sfj_entry *wb = wr(&j, 64 * K, 4 * K, 0xb);
    struct sfj_entry *w3 = wr(&j, 32 * K, 4 * K, 3);
    struct sfj_entry *f4 = fl(&j, 0);
    struct sfj_entry *r5 = rd(&j, 64 * K, 512); /* overlaps wb */
    struct sfj_entry *w6 = wr(&j, 0, 4 * K, 6); /* overlaps wa: newer data */
    dispatch(&j, &f);
    CHECK(was_issued(&f, wa) && was_issued(&f, wb) && was_issued(&f, w3));
    CHECK(!was_issued(&f, f4) && !was_issued(&f, r5) && !was_issued(&f, w6));
    complete(&j, &f, wb, 0); /* acked out of submission order */
    complete(&j, &f, wa, 0);
    dispatch(&j, &f); /* r5 and w6 go now; the flush waits for w3 */
    CHECK(was_issued(&f, r5) && was_issued(&f, w6) && !was_issued(&f, f4));
    /* The backend dies with w3, r5 and w6 in flight and the flush pending. */
    unsigned marked = sfj_requeue(&j);
    CHECK(marked == 5); /* the flush was never issued: held, not replayed */
    struct sfj_entry *want[] = {wb, wa, w3, f4, r5, w6};
    unsigned i = 0;
    for (struct sf_link *l = j.queue.next; l != &j.queue; l = l->next, i++) {
        struct sfj_entry *e = SF_CONTAINER(l, struct sfj_entry, q);
        CHECK(i < 6 && e == want[i]);
        CHECK(e->state == SFJ_PENDING && e->replay == (e != f4));
    }
    CHECK(i == 6);
    CHECK(j.n_retained == 0 && j.n_inflight == 0 && j.n_queue == 6);
    CHECK(sfj_replay_count(&j) == 5);
    /* New connection. A new request arrives during the recovery. */
    CHECK(sfj_set_conn(&j, 32, true) == 0);
    struct sfj_entry *r7 = rd(&j, 0, 512); /* must see w6's data: after wa and w6 */
    fake_reset(&f);
    dispatch(&j, &f);
    CHECK(was_issued(&f, wb) && was_issued(&f, wa) && was_issued(&f, w3));
    CHECK(!was_issued(&f, f4));                /* earlier writes still in flight */
    CHECK(!was_issued(&f, r5));                /* behind wb */
    CHECK(!was_issued(&f, w6));                /* behind wa: keeps newest data last */
    CHECK(!was_issued(&f, r7));                /* behind w6 */
    CHECK(wa->issues == 2 && wb->issues == 2); /* replayed */
    complete(&j, &f, wa, 0);
    dispatch(&j, &f);
    CHECK(was_issued(&f, w6) && !was_issued(&f, r7));
    complete(&j, &f, w6, 0);
    complete(&j, &f, wb, 0);
    dispatch(&j, &f);
    CHECK(was_issued(&f, r5) && was_issued(&f, r7) && !was_issued(&f, f4));
    complete(&j, &f, w3, 0);
    dispatch(&j, &f);
    CHECK(was_issued(&f, f4)); /* only now: every write before it is on the new backend */
    CHECK(j.n_retained == 4);  /* wa, w6, wb, w3 */
    complete(&j, &f, f4, 0);
    CHECK(j.n_retained == 0);
    CHECK(j.replayed == 4); /* wa w6 wb w3 completed as replays so far */
    complete(&j, &f, r5, 0);
    complete(&j, &f, r7, 0);
    CHECK(j.replayed == 5 && j.n_queue == 0);
    sfj_fini(&j);
}

/* A second loss during the replay keeps what the first replay achieved in
 * order. */
static void test_replay_twice(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 0);
    sfj_set_conn(&j, 32, true);
    struct sfj_entry *w1 = wr(&j, 0, 4 * K, 1);
    struct sfj_entry *w2 = wr(&j, 0, 4 * K, 2);
    dispatch(&j, &f);
    complete(&j, &f, w1, 0);
    dispatch(&j, &f);
    complete(&j, &f, w2, 0);
    sfj_requeue(&j);
    sfj_set_conn(&j, 32, true);
    fake_reset(&f);
    dispatch(&j, &f);
    CHECK(was_issued(&f, w1) && !was_issued(&f, w2));
    complete(&j, &f, w1, 0); /* replayed w1 is retained again, after w2 is not yet */
    sfj_requeue(&j);
    struct sfj_entry *want[] = {w1, w2};
    unsigned i = 0;
    for (struct sf_link *l = j.queue.next; l != &j.queue; l = l->next, i++)
        CHECK(i < 2 && SF_CONTAINER(l, struct sfj_entry, q) == want[i]);
    CHECK(i == 2);
    sfj_fini(&j);
}

/* A barrier also holds back everything after it. */
static void test_barrier(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 0);
    sfj_set_conn(&j, 32, true);
    struct sfj_entry *w1 = wr(&j, 0, 4 * K, 1);
    struct sfj_entry *b = fl(&j, SFJ_BARRIER);
    struct sfj_entry *w2 = wr(&j, 64 * K, 4 * K, 2);
    struct sfj_entry *r1 = rd(&j, 128 * K, 4 * K);
    dispatch(&j, &f);
    CHECK(was_issued(&f, w1) && !was_issued(&f, b) && !was_issued(&f, w2) && !was_issued(&f, r1));
    complete(&j, &f, w1, 0);
    dispatch(&j, &f);
    CHECK(was_issued(&f, b) && !was_issued(&f, w2) && !was_issued(&f, r1));
    complete(&j, &f, b, 0);
    CHECK(j.n_retained == 0);
    dispatch(&j, &f);
    CHECK(was_issued(&f, w2) && was_issued(&f, r1));
    /* After a lost connection the barrier keeps its place. */
    struct sfj_entry *b2 = fl(&j, SFJ_BARRIER);
    struct sfj_entry *w3 = wr(&j, 200 * K, 4 * K, 3);
    sfj_requeue(&j);
    sfj_set_conn(&j, 32, true);
    fake_reset(&f);
    dispatch(&j, &f);
    CHECK(was_issued(&f, w2) && was_issued(&f, r1) && !was_issued(&f, b2) && !was_issued(&f, w3));
    sfj_fini(&j);
}

/* Past the retention bound a write waits and the journal asks for a flush,
 * placed before the first pending entry; the flush releases and the write
 * goes. Replayed writes are exempt. */
static void test_retention_bound(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 16 * K);
    sfj_set_conn(&j, 32, true);
    struct sfj_entry *w1 = wr(&j, 0, 8 * K, 1);
    struct sfj_entry *w2 = wr(&j, 8 * K, 8 * K, 2);
    dispatch(&j, &f);
    CHECK(was_issued(&f, w1) && was_issued(&f, w2));
    CHECK(!sfj_wants_flush(&j));
    struct sfj_entry *w3 = wr(&j, 16 * K, 8 * K, 3);
    struct sfj_entry *r1 = rd(&j, 64 * K, 4 * K);
    dispatch(&j, &f);
    CHECK(!was_issued(&f, w3) && was_issued(&f, r1)); /* w3 over the bound, r1 goes */
    CHECK(sfj_wants_flush(&j));
    struct sfj_entry *fi = sfj_entry_new(SFJ_FLUSH | SFJ_INTERNAL, 3, 0, 0);
    sfj_insert_flush(&j, fi);
    CHECK(SF_CONTAINER(fi->q.next, struct sfj_entry, q) == w3); /* right before w3 */
    dispatch(&j, &f);
    CHECK(!was_issued(&f, fi)); /* w1 and w2 still in flight */
    complete(&j, &f, w1, 0);
    complete(&j, &f, w2, 0);
    CHECK(j.retained_bytes == 16 * K);
    dispatch(&j, &f);
    CHECK(was_issued(&f, fi) && !was_issued(&f, w3));
    CHECK(!sfj_wants_flush(&j)); /* a flush is ahead of w3 */
    complete(&j, &f, fi, 0);
    CHECK(j.retained_bytes == 0 && j.forced_flushes == 1);
    dispatch(&j, &f);
    CHECK(was_issued(&f, w3));
    complete(&j, &f, w3, 0);
    /* One write larger than the bound goes when nothing else is held. */
    struct sfj_entry *fi2 = sfj_entry_new(SFJ_FLUSH | SFJ_INTERNAL, 3, 0, 0);
    sfj_insert_flush(&j, fi2);
    dispatch(&j, &f);
    complete(&j, &f, fi2, 0);
    struct sfj_entry *big = wr(&j, 0, 32 * K, 9);
    dispatch(&j, &f);
    CHECK(was_issued(&f, big));
    complete(&j, &f, big, 0);
    /* After a lost connection the replayed write goes again, but a write
     * that was held (never issued) still respects the bound. */
    CHECK(j.retained_bytes == 32 * K);
    struct sfj_entry *w4 = wr(&j, 100 * K, 8 * K, 4);
    dispatch(&j, &f);
    CHECK(!was_issued(&f, w4) && sfj_wants_flush(&j));
    CHECK(sfj_requeue(&j) == 2); /* big (retained) and r1 (in flight) */
    CHECK(!w4->replay);
    sfj_set_conn(&j, 32, true);
    fake_reset(&f);
    dispatch(&j, &f);
    CHECK(was_issued(&f, big) && !was_issued(&f, w4) && sfj_wants_flush(&j));
    complete(&j, &f, r1, 0);
    sfj_fini(&j);
}

/* Without a write cache nothing is retained. */
static void test_write_through(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 0);
    sfj_set_conn(&j, 32, true);
    struct sfj_entry *w1 = wr(&j, 0, 4 * K, 1);
    dispatch(&j, &f);
    complete(&j, &f, w1, 0);
    CHECK(j.n_retained == 1);
    /* The new backend has no write cache: what was retained is released. */
    sfj_requeue(&j);
    sfj_set_conn(&j, 32, false);
    CHECK(j.n_queue == 1 && j.n_retained == 0);
    dispatch(&j, &f);
    complete(&j, &f, w1, 0);
    CHECK(j.n_retained == 0 && j.n_queue == 0);
    struct sfj_entry *w2 = wr(&j, 0, 4 * K, 2);
    dispatch(&j, &f);
    complete(&j, &f, w2, 0);
    CHECK(j.n_retained == 0);
    sfj_fini(&j);
}

/* Slots run out; a class that refuses or completes inline. */
static void test_slots_and_issue_results(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 0);
    sfj_set_conn(&j, 2, true);
    struct sfj_entry *r[4];
    for (int i = 0; i < 4; i++)
        r[i] = rd(&j, (uint64_t)i * 8 * K, 4 * K);
    dispatch(&j, &f);
    CHECK(f.nissued == 2 && was_issued(&f, r[0]) && was_issued(&f, r[1]));
    CHECK(sfj_set_conn(&j, 4, true) < 0 && errno == EBUSY);
    complete(&j, &f, r[0], 0);
    f.refuse_after = (int)f.nissued; /* out of resources now */
    dispatch(&j, &f);
    CHECK(r[2]->state == SFJ_PENDING && j.n_inflight == 1 && j.nfree == 1);
    f.refuse_after = -1;
    f.inline_done = 1; /* complete with status 0 at issue */
    unsigned before = f.done_calls;
    dispatch(&j, &f);
    CHECK(f.done_calls == before + 2 && j.n_queue == 1);
    f.inline_done = 0;
    complete(&j, &f, r[1], 0);
    CHECK(j.n_queue == 0 && j.nfree == 2);
    sfj_fini(&j);
}

/* Lookups: found, unknown, duplicate; ids are not reused. */
static void test_lookup(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 0);
    sfj_set_conn(&j, 4, true);
    struct sfj_entry *r1 = rd(&j, 0, 4 * K);
    dispatch(&j, &f);
    struct sfj_entry *e;
    uint64_t id = r1->wire_id;
    CHECK(sfj_lookup(&j, id, &e) == SFJ_FOUND && e == r1);
    CHECK(sfj_lookup(&j, id + 1, &e) == SFJ_UNKNOWN && !e);
    CHECK(sfj_lookup(&j, id ^ (1ull << 40), &e) == SFJ_UNKNOWN);
    CHECK(sfj_lookup(&j, 7, &e) == SFJ_UNKNOWN); /* slot 7 of 4 */
    CHECK(sfj_lookup(&j, 0, &e) == SFJ_UNKNOWN);
    uint32_t slot = r1->slot;
    complete(&j, &f, r1, 0);
    CHECK(sfj_lookup(&j, id, &e) == SFJ_DUPLICATE);
    /* The slot is reused with a new id: the old id stays a duplicate. */
    struct sfj_entry *r2 = rd(&j, 0, 4 * K);
    dispatch(&j, &f);
    CHECK(r2->slot == slot && r2->wire_id != id);
    CHECK(sfj_lookup(&j, id, &e) == SFJ_DUPLICATE);
    CHECK(sfj_lookup(&j, r2->wire_id, &e) == SFJ_FOUND && e == r2);
    /* A new connection forgets the old ids. */
    sfj_requeue(&j);
    sfj_set_conn(&j, 4, true);
    CHECK(sfj_lookup(&j, id, &e) == SFJ_UNKNOWN);
    sfj_fini(&j);
}

static int split_calls;
static void on_split(void *arg, void *owner)
{
    (void)arg;
    CHECK(owner != NULL);
    split_calls++;
}

/* Splitting for a connection that carries less per request. */
static void test_split(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 0);
    struct sfj_entry *w = wr(&j, 4 * K, 100 * K, 0);
    for (unsigned i = 0; i < 100 * K; i++)
        ((unsigned char *)w->data)[i] = (unsigned char)(i / 512);
    unsigned char buf[10 * K];
    struct sfj_entry *r = sfj_entry_new(SFJ_DATA, 1, 0, sizeof(buf));
    r->data = buf;
    r->owner = r;
    sfj_submit(&j, r);
    struct sfj_entry *fx = fl(&j, 0);
    split_calls = 0;
    CHECK(sfj_split(&j, 44 * K, on_split, NULL) == 0);
    CHECK(split_calls == 2 + 0); /* 100K -> 44+44+12; 10K read fits */
    uint64_t want_start[] = {4 * K, 48 * K, 92 * K};
    uint64_t want_len[] = {44 * K, 44 * K, 12 * K};
    struct sf_link *l = j.queue.next;
    for (int i = 0; i < 3; i++, l = l->next) {
        struct sfj_entry *p = SF_CONTAINER(l, struct sfj_entry, q);
        CHECK(p->start == want_start[i] && p->len == want_len[i]);
        CHECK(p->data_owned && p->owner == w);
        unsigned char *d = p->data;
        uint64_t base = p->start - 4 * K;
        CHECK(d[0] == (unsigned char)(base / 512) &&
              d[p->len - 1] == (unsigned char)((base + p->len - 1) / 512));
    }
    CHECK(SF_CONTAINER(l, struct sfj_entry, q) == r);
    CHECK(SF_CONTAINER(l->next, struct sfj_entry, q) == fx);
    split_calls = 0;
    CHECK(sfj_split(&j, 4 * K, on_split, NULL) == 0); /* the read: 10K -> 4+4+2 */
    CHECK(split_calls == 10 + 10 + 2 + 2);            /* 44K, 44K, 12K -> 11, 11, 3; 10K -> 3 */
    CHECK(j.n_queue == 25 + 3 + 1);
    sfj_fini(&j);
}

/* A device that can no longer be used fails everything, loudly. */
static void test_fail_all(void)
{
    struct sfj j;
    struct fake f;
    fake_reset(&f);
    sfj_init(&j, 0);
    sfj_set_conn(&j, 32, true);
    struct sfj_entry *w1 = wr(&j, 0, 4 * K, 1);
    dispatch(&j, &f);
    complete(&j, &f, w1, 0);
    wr(&j, 8 * K, 4 * K, 2);
    rd(&j, 0, 4 * K);
    dispatch(&j, &f);
    fl(&j, 0);
    unsigned before = f.done_calls;
    uint64_t lost = sfj_fail_all(&j, EIO, fake_done, &f);
    CHECK(lost == 4 * K);
    CHECK(f.done_calls == before + 3);
    for (unsigned i = before; i < f.done_calls; i++)
        CHECK(f.done_status[i] == EIO && f.done_owner[i] != NULL);
    CHECK(j.n_queue == 0 && j.n_retained == 0 && j.n_inflight == 0);
    sfj_fini(&j);
}

int main(void)
{
    test_overlap_order();
    test_flush_covers();
    test_replay_order();
    test_replay_twice();
    test_barrier();
    test_retention_bound();
    test_write_through();
    test_slots_and_issue_results();
    test_lookup();
    test_split();
    test_fail_all();
    return check_done("test-sf-journal");
}
