/* xs_trans.h - transactions, as xenstored_transaction.c does them.
 *
 * A transaction keeps its own copy of every node it touches, with the
 * generation count the node had when first touched (XS_NO_GENERATION if it
 * did not exist). At commit, any touched node whose committed generation has
 * changed since makes the commit fail with EAGAIN; otherwise the modified
 * copies replace the committed nodes, the node counts it changed are applied
 * and the watch events it queued fire.
 */
#ifndef XSIM_XS_TRANS_H
#define XSIM_XS_TRANS_H

#include <stdbool.h>
#include <stdint.h>

#include "xs_perms.h"

struct xs_node;
struct xs_conn;
struct xs_req;

struct xs_acc {
    char *path;
    uint64_t gen;           /* generation at first access */
    bool check;             /* first access was a read: check gen at commit */
    bool modified;          /* written or deleted in the transaction */
    struct xs_node *node;   /* the transaction's view; NULL: absent */
    bool fire, exact;       /* queued watch event */
    struct xs_perm *dperms; /* perms of the node when deleted, for the event */
    unsigned ndperms;
    struct xs_acc *next; /* in access order */
};

struct xs_delta {
    unsigned domid;
    int n;
};

struct xs_tx {
    uint32_t id;
    uint64_t gen;
    bool fail; /* a partial failure inside: commit gives ENOMEM */
    struct xs_map *accessed;
    struct xs_acc *head, *tail;
    unsigned naccessed;
    struct xs_delta *delta;
    unsigned ndelta;
    struct xs_tx *next; /* the connection's transactions */
};

struct xs_acc *xs_tx_find(struct xs_tx *tx, const char *path);
/* Record a first access; node (ownership passes) may be NULL. NULL on ENOMEM. */
struct xs_acc *xs_tx_add(struct xs_tx *tx, const char *path, uint64_t gen, bool check,
                         struct xs_node *node);
/* Change the transaction's count of nodes owned by domid. */
void xs_tx_delta(struct xs_tx *tx, unsigned domid, int n);

struct xs_tx *xs_tx_lookup(struct xs_conn *c, uint32_t id);
/* Drop every transaction of the connection (disconnect, RESET_WATCHES). */
void xs_tx_drop_all(struct xs_conn *c);

int xs_h_transaction_start(struct xs_conn *c, const struct xs_req *r);
int xs_h_transaction_end(struct xs_conn *c, const struct xs_req *r);

#endif
