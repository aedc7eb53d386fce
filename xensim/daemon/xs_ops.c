/* xs_ops.c - operations on nodes: get with permission checks, write,
 * mkdir, rm, set_perms, and removing what a departed domain owned. */
#define _GNU_SOURCE
#include "xs_ops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xs_dom.h"
#include "xs_path.h"
#include "xs_store.h"
#include "xs_tree.h"

static unsigned perm_of(const struct xs_who *w, const struct xs_node *n)
{
    return xs_perm_for(w->domid, xs_dom_target(w->domid), n->perms, n->nperms);
}

/* read_node_can_propagate_errno() */
static bool propagates(int err)
{
    return err == ENOMEM || err == ENOSPC;
}

/* errno_from_parents(): do not tell a client about a node unless it could
 * access the nearest existing ancestor the same way. */
static int errno_from_parents(const struct xs_who *w, const char *path, int err, unsigned perm)
{
    if (err == ENOMEM)
        return err;
    struct xs_node *n = NULL;
    char *name = strdup(path);
    if (!name)
        return ENOMEM;
    do {
        char *p = xs_path_parent(name);
        free(name);
        name = p;
        if (!name)
            return ENOMEM;
        int e = xs_store_read(w, name, &n);
        if (!e)
            break;
        n = NULL;
        if (propagates(e)) {
            free(name);
            return e;
        }
    } while (strcmp(name, "/") != 0);
    free(name);
    unsigned have = n ? perm_of(w, n) : XSP_NONE;
    return (have & perm) ? err : EACCES;
}

int xs_op_get(const struct xs_who *w, const char *path, unsigned perm, struct xs_node **out)
{
    if (!path || !xs_path_valid(path))
        return EINVAL;
    struct xs_node *n;
    int err = xs_store_read(w, path, &n);
    if (!err) {
        if ((perm_of(w, n) & perm) == perm) {
            *out = n;
            return 0;
        }
        err = EACCES;
    }
    if (propagates(err))
        return err;
    return errno_from_parents(w, path, err, perm);
}

/* write_node(): the node-size quota applies to unprivileged writers; a
 * failed write inside a transaction fails the transaction. */
static int write_node(const struct xs_who *w, struct xs_node *n, bool quota)
{
    if (quota && !xs_who_priv(w) && xs_node_size(n) >= XS_QUOTA_NODE_SIZE) {
        xs_node_free(n);
        xs_store_fail(w);
        return ENOSPC;
    }
    int err = xs_store_write(w, n);
    if (err)
        xs_store_fail(w);
    return err;
}

/* create_node(): path and any missing parents, bottom up as xenstored
 * writes them. Each new node inherits its parent's perms; an unprivileged
 * creator becomes the owner. The existing parent gains a child. */
static int create_node(const struct xs_who *w, const char *path, const void *data, unsigned len,
                       struct xs_node **leaf)
{
    char **names = NULL;
    struct xs_node **nodes = NULL, *parent = NULL;
    unsigned levels = 0;
    int err = ENOMEM;
    char *pname = strdup(path);
    if (!pname)
        return ENOMEM;
    /* names[0] = path, names[1] = its parent, ... up to the first existing. */
    for (;;) {
        char **nn = realloc(names, (levels + 1) * sizeof(*names));
        if (!nn) {
            free(pname);
            err = ENOMEM;
            goto out;
        }
        names = nn;
        names[levels++] = pname;
        pname = xs_path_parent(pname);
        err = ENOMEM;
        if (!pname)
            goto out;
        err = xs_store_read(w, pname, &parent);
        if (!err)
            break;
        if (err != ENOENT || strcmp(pname, "/") == 0) {
            free(pname);
            goto out;
        }
    }
    free(pname);
    err = ENOMEM;
    nodes = calloc(levels + 1, sizeof(*nodes));
    if (!nodes || !(nodes[levels] = xs_node_dup(parent)))
        goto out;
    for (unsigned i = levels; i-- > 0;) {
        struct xs_node *up = nodes[i + 1];
        struct xs_node *n = xs_node_new(names[i], 0, 0);
        if (!n)
            goto out;
        nodes[i] = n;
        if (xs_node_set_perms(n, up->perms, up->nperms) ||
            xs_node_add_child(up, xs_path_base(names[i])))
            goto out;
        if (!xs_who_priv(w))
            n->perms[0].id = w->domid;
    }
    if (xs_node_set_data(nodes[0], data, len))
        goto out;
    /* Quotas in xenstored's order: each new node, leaf first, then the parent. */
    int entries = xs_store_entries(w);
    for (unsigned k = 0; k <= levels; k++) {
        if (xs_who_priv(w))
            break;
        if (k < levels && entries + (w->tx ? 0 : (int)k) >= XS_QUOTA_NODES) {
            if (k > 0)
                xs_store_fail(w);
            err = ENOSPC;
            goto out;
        }
        if (xs_node_size(nodes[k]) >= XS_QUOTA_NODE_SIZE) {
            xs_store_fail(w);
            err = ENOSPC;
            goto out;
        }
    }
    for (unsigned k = 0; k <= levels; k++) {
        struct xs_node *n = nodes[k];
        unsigned owner = n->perms[0].id;
        nodes[k] = NULL;
        err = write_node(w, n, false);
        if (err) {
            xs_store_fail(w);
            goto out;
        }
        if (k < levels)
            xs_store_account(w, owner, 1);
        if (k == 0)
            *leaf = n; /* still valid: nothing else writes its path */
    }
    err = 0;
out:
    for (unsigned i = 0; i < levels; i++)
        free(names[i]);
    free(names);
    if (nodes)
        for (unsigned i = 0; i <= levels; i++)
            xs_node_free(nodes[i]);
    free(nodes);
    return err;
}

int xs_op_write(const struct xs_who *w, const char *path, const void *data, unsigned len)
{
    struct xs_node *n;
    int err = xs_op_get(w, path, XSP_WRITE, &n);
    if (err) {
        if (err != ENOENT)
            return err;
        err = create_node(w, path, data, len, &n);
        if (err)
            return err;
    } else {
        struct xs_node *copy = xs_node_dup(n);
        if (!copy || xs_node_set_data(copy, data, len)) {
            xs_node_free(copy);
            return ENOMEM;
        }
        err = write_node(w, copy, true);
        if (err)
            return err;
        n = copy;
    }
    xs_store_fire(w, path, false, n, NULL, 0);
    return 0;
}

int xs_op_mkdir(const struct xs_who *w, const char *path)
{
    struct xs_node *n;
    int err = xs_op_get(w, path, XSP_WRITE, &n);
    if (!err)
        return 0; /* exists already: fine, and no event */
    if (err != ENOENT)
        return err;
    err = create_node(w, path, NULL, 0, &n);
    if (err)
        return err;
    xs_store_fire(w, path, false, n, NULL, 0);
    return 0;
}

/* Remove path and everything below it, children first; events for the
 * children are exact, the one for root is not. */
static int delete_subtree(const struct xs_who *w, const char *path, const char *root)
{
    struct xs_node *n;
    int err = xs_store_read(w, path, &n);
    if (err)
        return err == ENOENT ? EIO : err;
    char *children = NULL;
    unsigned childlen = n->childlen;
    if (childlen) {
        children = malloc(childlen);
        if (!children)
            return ENOMEM;
        memcpy(children, n->children, childlen);
    }
    for (unsigned off = 0; off < childlen;) {
        const char *name = children + off;
        size_t nlen = strnlen(name, childlen - off);
        if (off + nlen >= childlen)
            break; /* unterminated: cannot happen */
        off += (unsigned)nlen + 1;
        char *cpath = xs_path_join(path, name);
        if (!cpath) {
            free(children);
            return ENOMEM;
        }
        err = delete_subtree(w, cpath, root);
        free(cpath);
        if (err) {
            free(children);
            return err;
        }
    }
    free(children);
    err = xs_store_read(w, path, &n);
    if (err)
        return err == ENOENT ? EIO : err;
    unsigned owner = n->perms[0].id;
    err = xs_store_delete(w, n, strcmp(path, root) != 0);
    if (err)
        return err;
    xs_store_account(w, owner, -1);
    return 0;
}

static int rm_node(const struct xs_who *w, const char *path)
{
    char *pname = xs_path_parent(path);
    if (!pname)
        return ENOMEM;
    struct xs_node *parent;
    int err = xs_store_read(w, pname, &parent);
    if (err) {
        free(pname);
        return propagates(err) ? err : EINVAL;
    }
    err = delete_subtree(w, path, path);
    if (!err)
        err = xs_store_read(w, pname, &parent);
    free(pname);
    if (err)
        return err;
    struct xs_node *copy = xs_node_dup(parent);
    if (!copy)
        return ENOMEM;
    if (!xs_node_del_child(copy, xs_path_base(path))) {
        xs_node_free(copy);
        return EIO;
    }
    return write_node(w, copy, false);
}

int xs_op_rm(const struct xs_who *w, const char *path)
{
    struct xs_node *n;
    int err = xs_op_get(w, path, XSP_WRITE, &n);
    if (err) {
        if (err != ENOENT)
            return err;
        /* Not there: fine if its parent is. */
        char *pname = xs_path_parent(path);
        if (!pname)
            return ENOMEM;
        err = xs_store_read(w, pname, &n);
        free(pname);
        if (!err)
            return 0;
        return propagates(err) ? err : ENOENT;
    }
    if (strcmp(path, "/") == 0)
        return EINVAL;
    return rm_node(w, path);
}

int xs_op_set_perms(const struct xs_who *w, const char *path, const struct xs_perm *p, unsigned np)
{
    struct xs_node *n;
    int err = xs_op_get(w, path, XSP_WRITE | XSP_OWNER, &n);
    if (err)
        return err;
    /* Unprivileged domains may not change the owner. */
    if (!xs_who_priv(w) && p[0].id != n->perms[0].id)
        return EPERM;
    struct xs_node *copy = xs_node_dup(n);
    struct xs_perm *old = malloc(n->nperms * sizeof(*old));
    unsigned nold = n->nperms;
    if (!copy || !old || xs_node_set_perms(copy, p, np)) {
        xs_node_free(copy);
        free(old);
        return ENOMEM;
    }
    memcpy(old, n->perms, nold * sizeof(*old));
    unsigned old_owner = old[0].id, new_owner = p[0].id;
    err = write_node(w, copy, true);
    if (!err) {
        xs_store_account(w, old_owner, -1);
        xs_store_account(w, new_owner, 1);
        xs_store_fire(w, path, false, copy, old, nold);
    }
    free(old);
    return err;
}

static void remove_owned(const char *path, unsigned domid)
{
    struct xs_node *n = xs_tree_get(path);
    if (!n)
        return;
    xs_dom_adjust_perms(n);
    if (n->perms[0].id == domid && strcmp(path, "/") != 0) {
        if (rm_node(&xs_who_dom0, path))
            fprintf(stderr, "xensim xenstored: error deleting orphaned node %s\n", path);
        return;
    }
    unsigned childlen = n->childlen;
    char *children = childlen ? malloc(childlen) : NULL;
    if (childlen && !children)
        return;
    if (childlen)
        memcpy(children, n->children, childlen);
    for (unsigned off = 0; off < childlen;) {
        const char *name = children + off;
        size_t nlen = strnlen(name, childlen - off);
        if (off + nlen >= childlen)
            break;
        off += (unsigned)nlen + 1;
        char *cpath = xs_path_join(path, name);
        if (cpath)
            remove_owned(cpath, domid);
        free(cpath);
    }
    free(children);
}

void xs_op_remove_owned(unsigned domid)
{
    if (domid != 0)
        remove_owned("/", domid);
}
