/* xspool.h - a few more xenstore connections, and threads to use them at
 * once (xspool.c). A rewire of many devices is a long row of round trips,
 * each waiting for xenstored's answer to the last; on K connections K of
 * them are in flight at a time (issue 17: 100 devices, one after another,
 * were most of a recovery). */
#ifndef SD_XSPOOL_H
#define SD_XSPOOL_H

#include <xenstore.h>

struct sd;

#define SD_XSPOOL_MAX 7 /* connections beside the main one */

/* Open the connections (before the privileges are dropped: on Xen the
 * socket is root's). One that cannot be opened is logged and done
 * without; never fails. */
void sd_xspool_open(struct sd *sd);
void sd_xspool_close(struct sd *sd);

/* fn(xs, i, arg) for every i in [0, n), at most one call per connection at
 * a time, the main connection (sd->xs) among them; returns when all are
 * done. fn runs in other threads: it must touch only what belongs to i. */
typedef void sd_xspool_fn(struct xs_handle *xs, unsigned i, void *arg);
void sd_xspool_run(struct sd *sd, unsigned n, sd_xspool_fn *fn, void *arg);

#endif
