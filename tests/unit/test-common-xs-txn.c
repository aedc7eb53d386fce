/* test-common-xs-txn.c - T0 tests of the transaction retry helper
 * (common/xs_txn.c) over a stand-in for libxenstore's two transaction calls:
 * a commit that conflicts N times, a body that fails, a start that fails. */
#define _GNU_SOURCE
#include "check.h"
#include "xs_txn.h"

#include <errno.h>
#include <string.h>

/* The stand-in store: how many commits conflict before one succeeds, and
 * what the calls saw. */
static struct {
    int conflicts;    /* commits left to fail with EAGAIN */
    int commit_errno; /* if set, commits fail with it instead */
    bool start_fails;
    int starts, commits, aborts;
    xs_transaction_t open;
} st;

xs_transaction_t xs_transaction_start(struct xs_handle *h)
{
    (void)h;
    if (st.start_fails) {
        errno = EACCES;
        return XBT_NULL;
    }
    st.starts++;
    st.open = (xs_transaction_t)(100 + st.starts);
    return st.open;
}

bool xs_transaction_end(struct xs_handle *h, xs_transaction_t t, bool abort)
{
    (void)h;
    CHECK_EQ(t, st.open);
    st.open = XBT_NULL;
    if (abort) {
        st.aborts++;
        errno = 0; /* the helper must keep the body's errno, not this */
        return true;
    }
    st.commits++;
    if (st.commit_errno) {
        errno = st.commit_errno;
        return false;
    }
    if (st.conflicts > 0) {
        st.conflicts--;
        errno = EAGAIN;
        return false;
    }
    return true;
}

struct body_arg {
    int runs;
    int fail_on; /* run number that fails with ENOSPC; 0: never */
    xs_transaction_t last;
};

static int body(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    struct body_arg *b = arg;
    CHECK(xs == (struct xs_handle *)&st);
    CHECK(t != XBT_NULL);
    b->last = t;
    if (++b->runs == b->fail_on) {
        errno = ENOSPC;
        return -1;
    }
    return 0;
}

static struct xs_handle *const XS = (struct xs_handle *)&st;

static void reset(void)
{
    memset(&st, 0, sizeof(st));
}

static void test_commits(void)
{
    reset();
    struct body_arg b = {0};
    const char *call = "untouched";
    CHECK_EQ(xsu_txn(XS, body, &b, &call), 0);
    CHECK_EQ(b.runs, 1);
    CHECK_EQ(st.commits, 1);
    CHECK(strcmp(call, "untouched") == 0);

    /* Conflicts are retried, each try in a new transaction, the body rerun. */
    reset();
    st.conflicts = XSU_TXN_TRIES - 1;
    memset(&b, 0, sizeof(b));
    CHECK_EQ(xsu_txn(XS, body, &b, NULL), 0);
    CHECK_EQ(b.runs, XSU_TXN_TRIES);
    CHECK_EQ(st.starts, XSU_TXN_TRIES);
    CHECK_EQ(b.last, 100 + XSU_TXN_TRIES);
    CHECK_EQ(st.aborts, 0);
}

static void test_gives_up(void)
{
    reset();
    st.conflicts = XSU_TXN_TRIES;
    struct body_arg b = {0};
    const char *call = NULL;
    errno = 0;
    CHECK_EQ(xsu_txn(XS, body, &b, &call), -1);
    CHECK_EQ(errno, EAGAIN);
    CHECK(call && strcmp(call, "xs_transaction_end") == 0);
    CHECK_EQ(st.commits, XSU_TXN_TRIES);

    /* Another commit error is not retried. */
    reset();
    st.commit_errno = EIO;
    memset(&b, 0, sizeof(b));
    CHECK_EQ(xsu_txn(XS, body, &b, &call), -1);
    CHECK_EQ(errno, EIO);
    CHECK_EQ(st.commits, 1);
    CHECK(call && strcmp(call, "xs_transaction_end") == 0);
}

static void test_failures(void)
{
    /* The body fails on its second run: aborted, its errno kept, call NULL. */
    reset();
    st.conflicts = 1;
    struct body_arg b = {.fail_on = 2};
    const char *call = "untouched";
    CHECK_EQ(xsu_txn(XS, body, &b, &call), -1);
    CHECK_EQ(errno, ENOSPC);
    CHECK(call == NULL);
    CHECK_EQ(st.aborts, 1);
    CHECK_EQ(st.commits, 1);
    CHECK_EQ(st.open, XBT_NULL);

    /* No transaction at all. */
    reset();
    st.start_fails = true;
    memset(&b, 0, sizeof(b));
    CHECK_EQ(xsu_txn(XS, body, &b, &call), -1);
    CHECK_EQ(errno, EACCES);
    CHECK(call && strcmp(call, "xs_transaction_start") == 0);
    CHECK_EQ(b.runs, 0);
}

int main(void)
{
    test_commits();
    test_gives_up();
    test_failures();
    return check_done("test-common-xs-txn");
}
