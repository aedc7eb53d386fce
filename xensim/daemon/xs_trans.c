/* xs_trans.c - TRANSACTION_START/END, commit and conflict detection. */
#define _GNU_SOURCE
#include "xs_trans.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xs_conn.h"
#include "xs_dom.h"
#include "xs_map.h"
#include "xs_tree.h"
#include "xs_watch.h"

static void acc_free(struct xs_acc *a)
{
    if (!a)
        return;
    free(a->path);
    xs_node_free(a->node);
    free(a->dperms);
    free(a);
}

static void tx_free(struct xs_tx *tx)
{
    if (!tx)
        return;
    while (tx->head) {
        struct xs_acc *a = tx->head;
        tx->head = a->next;
        acc_free(a);
    }
    xs_map_free(tx->accessed);
    free(tx->delta);
    free(tx);
}

struct xs_acc *xs_tx_find(struct xs_tx *tx, const char *path)
{
    return xs_map_get(tx->accessed, path);
}

struct xs_acc *xs_tx_add(struct xs_tx *tx, const char *path, uint64_t gen, bool check,
                         struct xs_node *node)
{
    struct xs_acc *a = calloc(1, sizeof(*a));
    if (!a || !(a->path = strdup(path)) || xs_map_put(tx->accessed, a->path, a)) {
        if (a)
            free(a->path);
        free(a);
        xs_node_free(node);
        return NULL;
    }
    a->gen = gen;
    a->check = check;
    a->node = node;
    if (tx->tail)
        tx->tail->next = a;
    else
        tx->head = a;
    tx->tail = a;
    tx->naccessed++;
    return a;
}

void xs_tx_delta(struct xs_tx *tx, unsigned domid, int n)
{
    for (unsigned i = 0; i < tx->ndelta; i++) {
        if (tx->delta[i].domid == domid) {
            tx->delta[i].n += n;
            return;
        }
    }
    struct xs_delta *d = realloc(tx->delta, (tx->ndelta + 1) * sizeof(*d));
    if (!d) {
        tx->fail = true; /* let the transaction fail */
        return;
    }
    tx->delta = d;
    tx->delta[tx->ndelta].domid = domid;
    tx->delta[tx->ndelta].n = n;
    tx->ndelta++;
}

struct xs_tx *xs_tx_lookup(struct xs_conn *c, uint32_t id)
{
    for (struct xs_tx *tx = c->txs; tx; tx = tx->next)
        if (tx->id == id)
            return tx;
    return NULL;
}

static void unlink_tx(struct xs_conn *c, struct xs_tx *tx)
{
    for (struct xs_tx **pp = &c->txs; *pp; pp = &(*pp)->next) {
        if (*pp == tx) {
            *pp = tx->next;
            c->ntxs--;
            return;
        }
    }
}

void xs_tx_drop_all(struct xs_conn *c)
{
    while (c->txs) {
        struct xs_tx *tx = c->txs;
        c->txs = tx->next;
        tx_free(tx);
    }
    c->ntxs = 0;
    c->who.tx = NULL;
}

int xs_h_transaction_start(struct xs_conn *c, const struct xs_req *r)
{
    (void)r;
    if (c->who.tx)
        return EBUSY; /* no nested transactions */
    if (!xs_who_priv(&c->who) && c->ntxs > XS_QUOTA_TRANSACTION)
        return ENOSPC;
    struct xs_tx *tx = calloc(1, sizeof(*tx));
    if (!tx || !(tx->accessed = xs_map_new())) {
        free(tx);
        return ENOMEM;
    }
    tx->gen = xs_generation_next();
    /* An unused identifier; 0 means "no transaction". */
    do
        tx->id = c->next_tx_id++;
    while (tx->id == 0 || xs_tx_lookup(c, tx->id));
    struct xs_tx **pp = &c->txs;
    while (*pp)
        pp = &(*pp)->next;
    *pp = tx;
    c->ntxs++;
    char id[16];
    snprintf(id, sizeof(id), "%u", tx->id);
    xs_reply(c, r, id, strlen(id) + 1);
    return 0;
}

/* transaction_fix_domains(): would the commit leave a domain over quota? */
static int check_quota(const struct xs_tx *tx)
{
    for (unsigned i = 0; i < tx->ndelta; i++) {
        unsigned domid = tx->delta[i].domid;
        if (domid == 0)
            continue;
        struct xs_dom *d = xs_dom_get(domid);
        if (!d)
            return ENOMEM; /* the domain went away meanwhile */
        if (d->nbentry + tx->delta[i].n >= XS_QUOTA_NODES)
            return ENOSPC;
    }
    return 0;
}

static int commit(struct xs_tx *tx)
{
    if (tx->fail)
        return ENOMEM;
    int err = check_quota(tx);
    if (err)
        return err;
    for (struct xs_acc *a = tx->head; a; a = a->next) {
        if (!a->check)
            continue;
        struct xs_node *g = xs_tree_get(a->path);
        if ((g ? g->gen : XS_NO_GENERATION) != a->gen)
            return EAGAIN;
    }
    for (struct xs_acc *a = tx->head; a; a = a->next) {
        if (!a->modified)
            continue;
        if (a->node) {
            a->node->gen = xs_generation_next();
            xs_tree_put(a->node);
            a->node = NULL;
        } else {
            xs_tree_del(a->path);
        }
    }
    for (unsigned i = 0; i < tx->ndelta; i++)
        xs_dom_entries_add(tx->delta[i].domid, tx->delta[i].n);
    for (struct xs_acc *a = tx->head; a; a = a->next)
        if (a->fire)
            xs_watch_fire(a->path, a->exact, NULL, 0, a->dperms, a->ndperms);
    return 0;
}

int xs_h_transaction_end(struct xs_conn *c, const struct xs_req *r)
{
    const char *arg = xs_req_onearg(r);
    if (!arg || (strcmp(arg, "T") && strcmp(arg, "F")))
        return EINVAL;
    struct xs_tx *tx = c->who.tx;
    if (!tx)
        return ENOENT;
    /* The transaction ends here, whatever the outcome. */
    c->who.tx = NULL;
    unlink_tx(c, tx);
    int err = strcmp(arg, "T") == 0 ? commit(tx) : 0;
    tx_free(tx);
    if (err)
        return err;
    xs_reply_ok(c, r);
    return 0;
}
