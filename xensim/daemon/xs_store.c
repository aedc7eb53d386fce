/* xs_store.c - transaction-aware access to nodes, node accounting and
 * watch firing. */
#include "xs_store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xs_dom.h"
#include "xs_trans.h"
#include "xs_tree.h"
#include "xs_watch.h"

const struct xs_who xs_who_dom0 = {.domid = 0, .tx = NULL};

void xs_store_fail(const struct xs_who *w)
{
    if (w->tx)
        w->tx->fail = true;
}

/* A first access inside a transaction, subject to its node quota. */
static struct xs_acc *tx_access(const struct xs_who *w, const char *path, bool check, int *err)
{
    struct xs_tx *tx = w->tx;
    struct xs_acc *a = xs_tx_find(tx, path);
    if (a)
        return a;
    if (!xs_who_priv(w) && tx->naccessed >= XS_QUOTA_TRANS_NODES) {
        tx->fail = true;
        *err = ENOSPC;
        return NULL;
    }
    struct xs_node *g = xs_tree_get(path);
    struct xs_node *copy = NULL;
    if (g && check) {
        xs_dom_adjust_perms(g);
        copy = xs_node_dup(g);
        if (!copy)
            goto nomem;
    }
    a = xs_tx_add(tx, path, g ? g->gen : XS_NO_GENERATION, check, copy);
    if (a)
        return a;
nomem:
    tx->fail = true;
    *err = ENOMEM;
    return NULL;
}

int xs_store_read(const struct xs_who *w, const char *path, struct xs_node **out)
{
    if (!w->tx) {
        struct xs_node *n = xs_tree_get(path);
        if (!n)
            return ENOENT;
        xs_dom_adjust_perms(n);
        *out = n;
        return 0;
    }
    int err = 0;
    struct xs_acc *a = tx_access(w, path, true, &err);
    if (!a)
        return err;
    if (!a->node)
        return ENOENT;
    *out = a->node;
    return 0;
}

int xs_store_write(const struct xs_who *w, struct xs_node *n)
{
    n->gen = xs_generation_next();
    xs_dom_adjust_perms(n);
    if (!w->tx)
        return xs_tree_put(n);
    int err = 0;
    struct xs_acc *a = tx_access(w, n->path, false, &err);
    if (!a) {
        xs_node_free(n);
        return err;
    }
    xs_node_free(a->node);
    a->node = n;
    a->modified = true;
    return 0;
}

int xs_store_delete(const struct xs_who *w, struct xs_node *n, bool exact)
{
    xs_store_fire(w, n->path, exact, n, NULL, 0);
    xs_generation_next();
    if (!w->tx) {
        xs_tree_del(n->path);
        return 0;
    }
    int err = 0;
    struct xs_acc *a = tx_access(w, n->path, false, &err);
    if (!a)
        return err;
    struct xs_perm *p = malloc(n->nperms * sizeof(*p));
    if (!p) {
        w->tx->fail = true;
        return ENOMEM;
    }
    memcpy(p, n->perms, n->nperms * sizeof(*p));
    free(a->dperms);
    a->dperms = p;
    a->ndperms = n->nperms;
    xs_node_free(a->node); /* may be n itself */
    a->node = NULL;
    a->modified = true;
    return 0;
}

void xs_store_account(const struct xs_who *w, unsigned domid, int n)
{
    if (w->tx)
        xs_tx_delta(w->tx, domid, n);
    else
        xs_dom_entries_add(domid, n);
}

int xs_store_entries(const struct xs_who *w)
{
    return xs_who_priv(w) ? 0 : xs_dom_entries(w->domid);
}

void xs_store_fire(const struct xs_who *w, const char *path, bool exact, const struct xs_node *n,
                   const struct xs_perm *old, unsigned nold)
{
    if (!w->tx) {
        xs_watch_fire(path, exact, n ? n->perms : NULL, n ? n->nperms : 0, old, nold);
        return;
    }
    struct xs_acc *a = xs_tx_find(w->tx, path);
    if (!a) {
        w->tx->fail = true;
        return;
    }
    /* A subtree event replaces an exact one, not the other way round. */
    if (!a->fire) {
        a->fire = true;
        a->exact = exact;
    } else if (!exact) {
        a->exact = false;
    }
}
