/* xs_watch.h - watches and watch events (xenstored_watch.c).
 *
 * An event for a path goes to every watch on that path or above it (only on
 * the path itself for "exact" events: children of a removed node, special
 * events), on connections whose domain may read the node or its parent
 * (or, for a permission change, could read it before). Special events
 * (@introduceDomain, @releaseDomain) go to connections whose domain may read
 * the special node. An event path is relative if the watch was set with a
 * relative path.
 */
#ifndef XSIM_XS_WATCH_H
#define XSIM_XS_WATCH_H

#include <stdbool.h>

#include "xs_perms.h"

struct xs_conn;
struct xs_req;

struct xs_watch {
    char *node; /* absolute, or "@..." */
    char *token;
    bool relative;
    struct xs_watch *next;
};

/* Fire an event for path. perms: the node's permissions (NULL: look the
 * node up); old: permissions before a SET_PERMS, else NULL. */
void xs_watch_fire(const char *path, bool exact, const struct xs_perm *perms, unsigned nperms,
                   const struct xs_perm *old, unsigned nold);
/* Fire a special event ("@introduceDomain", "@releaseDomain"). */
void xs_watch_fire_special(const char *name);

/* Drop every watch of the connection. */
void xs_watch_drop_all(struct xs_conn *c);

int xs_h_watch(struct xs_conn *c, const struct xs_req *r);
int xs_h_unwatch(struct xs_conn *c, const struct xs_req *r);
int xs_h_reset_watches(struct xs_conn *c, const struct xs_req *r);

#endif
