/* xs_txn.c - a xenstore transaction retried on conflict (see xs_txn.h). */
#define _GNU_SOURCE
#include "xs_txn.h"

#include <errno.h>
#include <stddef.h>

static int failed(const char **call, const char *what, int err)
{
    if (call)
        *call = what;
    errno = err;
    return -1;
}

int xsu_txn(struct xs_handle *xs, xsu_txn_body *body, void *arg, const char **call)
{
    for (int tries = 0; tries < XSU_TXN_TRIES; tries++) {
        xs_transaction_t t = xs_transaction_start(xs);
        if (t == XBT_NULL)
            return failed(call, "xs_transaction_start", errno);
        if (body(xs, t, arg) < 0) {
            int e = errno;
            xs_transaction_end(xs, t, true);
            return failed(call, NULL, e);
        }
        if (xs_transaction_end(xs, t, false))
            return 0;
        if (errno != EAGAIN)
            return failed(call, "xs_transaction_end", errno);
    }
    return failed(call, "xs_transaction_end", EAGAIN);
}
