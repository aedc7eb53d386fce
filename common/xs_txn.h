/* xs_txn.h - one xenstore transaction, retried on conflict.
 *
 * xenstored refuses to commit a transaction another client's write overlapped
 * (EAGAIN); the writer then starts over. xsu_txn runs the caller's body in a
 * fresh transaction until a commit succeeds, up to XSU_TXN_TRIES times.
 *
 * Errors (see common/README.md): -1 with errno; nothing is logged here. The
 * caller reports the failure once, naming the call and the object; *call (if
 * not NULL) names the call that failed: "xs_transaction_start",
 * "xs_transaction_end" (the commit; errno EAGAIN when every try conflicted),
 * or NULL when the body failed (the body knows what it was doing).
 */
#ifndef UNDERSTUDY_XS_TXN_H
#define UNDERSTUDY_XS_TXN_H

#include <xenstore.h>

/* The one bound on tries, for every writer: conflicts come from the peer's
 * and the toolstack's writes to the same dirs, a handful at most. */
#define XSU_TXN_TRIES 16

/* The writes of one try, all in t. 0, or -1 with errno: the transaction is
 * then aborted (errno kept) and not retried. Run again on each retry, so it
 * must rewrite everything. */
typedef int xsu_txn_body(struct xs_handle *xs, xs_transaction_t t, void *arg);

/* Run body in a transaction until it commits. 0, or -1 with errno. */
int xsu_txn(struct xs_handle *xs, xsu_txn_body *body, void *arg, const char **call);

#endif
