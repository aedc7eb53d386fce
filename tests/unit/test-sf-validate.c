/* test-sf-validate.c - T0 tests of response validation
 * (shadow-frontends/core/sf_validate.c) over a journal: unknown ids,
 * duplicates, wrong operations, impossible statuses, ring indexes. */
#define _GNU_SOURCE
#include "check.h"
#include "sf_validate.h"

#include <stdio.h>
#include <string.h>

/* Rules of a made-up class: the response op must equal the entry's op + 100;
 * status 0 and -1 always, -2 only for op 3. */
static bool op_matches(void *cls, const struct sfj_entry *e, unsigned op)
{
    CHECK(cls == (void *)&check_failures);
    return op == e->op + 100;
}

static bool status_ok(void *cls, const struct sfj_entry *e, int status)
{
    (void)cls;
    return status == 0 || status == -1 || (status == -2 && e->op == 3);
}

static const struct sfv_rules rules = {.op_matches = op_matches, .status_ok = status_ok};

static int issue(void *arg, struct sfj_entry *e, int *status)
{
    (void)arg;
    (void)e;
    (void)status;
    return 0;
}

static void done(void *arg, void *owner, struct sfj_entry *e, int status)
{
    (void)arg;
    (void)owner;
    (void)e;
    (void)status;
}

static void test_responses(void)
{
    struct sfj j;
    sfj_init(&j, 0);
    sfj_set_conn(&j, 8, true);
    struct sfj_entry *r = sfj_entry_new(SFJ_DATA, 1, 0, 4096);
    struct sfj_entry *f = sfj_entry_new(SFJ_FLUSH, 3, 0, 0);
    sfj_submit(&j, r);
    sfj_submit(&j, f);
    sfj_dispatch(&j, 0, issue, done, NULL);
    void *cls = &check_failures;
    struct sfj_entry *e;
    CHECK(sfv_check(&j, &rules, cls, r->wire_id, 101, 0, &e) == SFV_OK && e == r);
    CHECK(sfv_check(&j, &rules, cls, r->wire_id + 1, 101, 0, &e) == SFV_UNKNOWN_ID && !e);
    CHECK(sfv_check(&j, &rules, cls, ~0ull, 101, 0, &e) == SFV_UNKNOWN_ID);
    CHECK(sfv_check(&j, &rules, cls, r->wire_id, 102, 0, &e) == SFV_WRONG_OP && !e);
    CHECK(sfv_check(&j, &rules, cls, r->wire_id, 101, 7, &e) == SFV_BAD_STATUS && !e);
    CHECK(sfv_check(&j, &rules, cls, r->wire_id, 101, -2, &e) == SFV_BAD_STATUS);
    CHECK(sfv_check(&j, &rules, cls, f->wire_id, 103, -2, &e) == SFV_OK && e == f);
    CHECK(sfv_check(&j, &rules, cls, f->wire_id, 103, -3, &e) == SFV_BAD_STATUS);
    uint64_t rid = r->wire_id;
    sfj_complete(&j, r, 0, done, NULL);
    CHECK(sfv_check(&j, &rules, cls, rid, 101, 0, &e) == SFV_DUPLICATE && !e);
    char buf[80];
    sfv_describe(buf, sizeof(buf), SFV_DUPLICATE, 0x10001, 1, -1);
    CHECK(!strcmp(buf, "duplicate id=0x10001 op=1 status=-1"));
    sfv_describe(buf, 12, SFV_WRONG_OP, 1, 2, 3);
    CHECK(strlen(buf) == 11);
    CHECK(!strcmp(sfv_name(SFV_UNKNOWN_ID), "unknown-id"));
    CHECK(!strcmp(sfv_name(SFV_BAD_STATUS), "bad-status"));
    sfj_fini(&j);
}

static void test_ring_indexes(void)
{
    /* 32-entry ring, 5 requests outstanding (cons 10, produced 15). */
    CHECK(sfv_ring_prod_ok(10, 10, 15, 32));
    CHECK(sfv_ring_prod_ok(15, 10, 15, 32));
    CHECK(!sfv_ring_prod_ok(16, 10, 15, 32)); /* more responses than requests */
    CHECK(!sfv_ring_prod_ok(9, 10, 15, 32));  /* producer went backwards */
    CHECK(!sfv_ring_prod_ok(0x80000000u, 10, 15, 32));
    /* Across the 32-bit wrap. */
    CHECK(sfv_ring_prod_ok(2, 0xfffffffeu, 4, 32));
    CHECK(!sfv_ring_prod_ok(5, 0xfffffffeu, 4, 32));
    /* Our own indexes beyond the ring size are refused too. */
    CHECK(!sfv_ring_prod_ok(10, 10, 50, 32));
}

int main(void)
{
    test_responses();
    test_ring_indexes();
    return check_done("test-sf-validate");
}
