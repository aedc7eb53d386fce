/* xs_tree.c - node records and the committed store. */
#define _GNU_SOURCE
#include "xs_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xs_map.h"

#define RECORD_HDR_SIZE  24 /* sizeof(struct xs_tdb_record_hdr) */
#define RECORD_PERM_SIZE 8  /* sizeof(struct xs_permissions) */

static struct xs_map *tree;
static uint64_t generation;

struct xs_node *xs_node_new(const char *path, unsigned owner, unsigned perms)
{
    struct xs_node *n = calloc(1, sizeof(*n));
    if (!n)
        return NULL;
    n->path = strdup(path);
    n->perms = malloc(sizeof(*n->perms));
    if (!n->path || !n->perms) {
        xs_node_free(n);
        return NULL;
    }
    n->perms[0].id = owner;
    n->perms[0].perms = perms;
    n->nperms = 1;
    return n;
}

static void *memdup(const void *p, size_t len)
{
    void *q = malloc(len ? len : 1);
    if (q && len)
        memcpy(q, p, len);
    return q;
}

struct xs_node *xs_node_dup(const struct xs_node *n)
{
    struct xs_node *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->gen = n->gen;
    d->nperms = n->nperms;
    d->datalen = n->datalen;
    d->childlen = n->childlen;
    d->path = strdup(n->path);
    d->perms = memdup(n->perms, n->nperms * sizeof(*n->perms));
    d->data = memdup(n->data, n->datalen);
    d->children = memdup(n->children, n->childlen);
    if (!d->path || !d->perms || !d->data || !d->children) {
        xs_node_free(d);
        return NULL;
    }
    return d;
}

void xs_node_free(struct xs_node *n)
{
    if (!n)
        return;
    free(n->path);
    free(n->perms);
    free(n->data);
    free(n->children);
    free(n);
}

int xs_node_set_data(struct xs_node *n, const void *data, unsigned len)
{
    void *d = memdup(data, len);
    if (!d)
        return ENOMEM;
    free(n->data);
    n->data = d;
    n->datalen = len;
    return 0;
}

int xs_node_set_perms(struct xs_node *n, const struct xs_perm *p, unsigned np)
{
    struct xs_perm *d = memdup(p, np * sizeof(*p));
    if (!d)
        return ENOMEM;
    free(n->perms);
    n->perms = d;
    n->nperms = np;
    return 0;
}

int xs_node_add_child(struct xs_node *n, const char *base)
{
    size_t blen = strlen(base) + 1;
    char *c = realloc(n->children, n->childlen + blen);
    if (!c)
        return ENOMEM;
    memcpy(c + n->childlen, base, blen);
    n->children = c;
    n->childlen += (unsigned)blen;
    return 0;
}

bool xs_node_del_child(struct xs_node *n, const char *base)
{
    for (unsigned off = 0; off < n->childlen;) {
        size_t len = strnlen(n->children + off, n->childlen - off) + 1;
        if (strcmp(n->children + off, base) == 0) {
            memmove(n->children + off, n->children + off + len, n->childlen - off - len);
            n->childlen -= (unsigned)len;
            return true;
        }
        off += (unsigned)len;
    }
    return false;
}

size_t xs_node_size(const struct xs_node *n)
{
    return RECORD_HDR_SIZE + (size_t)n->nperms * RECORD_PERM_SIZE + n->datalen + n->childlen;
}

int xs_tree_init(void)
{
    tree = xs_map_new();
    return tree ? 0 : ENOMEM;
}

static void free_node(void *val, void *arg)
{
    (void)arg;
    xs_node_free(val);
}

void xs_tree_fini(void)
{
    if (!tree)
        return;
    xs_map_foreach(tree, free_node, NULL);
    xs_map_free(tree);
    tree = NULL;
}

struct xs_node *xs_tree_get(const char *path)
{
    return xs_map_get(tree, path);
}

int xs_tree_put(struct xs_node *n)
{
    struct xs_node *old = xs_map_get(tree, n->path);
    int err = xs_map_put(tree, n->path, n);
    if (err) {
        xs_node_free(n);
        return err;
    }
    if (old != n)
        xs_node_free(old);
    return 0;
}

void xs_tree_del(const char *path)
{
    xs_node_free(xs_map_del(tree, path));
}

uint64_t xs_generation_next(void)
{
    return generation++;
}

uint64_t xs_generation_now(void)
{
    return generation;
}
