/* xs_store.h - nodes as one requester sees them: the committed store, or
 * its transaction's view of it. Every operation on nodes goes through here,
 * so that reads in a transaction are recorded for conflict checking, writes
 * stay private until commit, node counts are charged to the transaction and
 * watch events are queued until commit.
 */
#ifndef XSIM_XS_STORE_H
#define XSIM_XS_STORE_H

#include <stdbool.h>

#include "xs_perms.h"

struct xs_node;
struct xs_tx;

/* Who is asking: a domain, inside a transaction or not. dom0 is privileged. */
struct xs_who {
    unsigned domid;
    struct xs_tx *tx;
};

extern const struct xs_who xs_who_dom0; /* the daemon's own (toolstack) operations */

static inline bool xs_who_priv(const struct xs_who *w)
{
    return w->domid == 0;
}

/* The node at path (stale perms adjusted). *out stays valid until the next
 * write or delete. Returns 0, ENOENT, ENOSPC (transaction node quota) or
 * ENOMEM. */
int xs_store_read(const struct xs_who *w, const char *path, struct xs_node **out);
/* Write n (ownership passes); it takes the next generation count. */
int xs_store_write(const struct xs_who *w, struct xs_node *n);
/* Fire (or queue) the event for n, a node w has read, then delete it; n is
 * gone afterwards. exact as for xs_store_fire. */
int xs_store_delete(const struct xs_who *w, struct xs_node *n, bool exact);

/* Change the count of nodes owned by domid. */
void xs_store_account(const struct xs_who *w, unsigned domid, int n);
/* domain_entry(): nodes owned by w's domain, 0 if privileged. */
int xs_store_entries(const struct xs_who *w);

/* A node changed: fire (or, in a transaction, queue) watch events for it.
 * exact: only watches on path itself (the children of a removed node). n:
 * the node as it is now or was when deleted, or NULL to look it up; old:
 * its perms before a SET_PERMS. */
void xs_store_fire(const struct xs_who *w, const char *path, bool exact, const struct xs_node *n,
                   const struct xs_perm *old, unsigned nold);

/* Mark w's transaction failed (nothing if none). */
void xs_store_fail(const struct xs_who *w);

#endif
