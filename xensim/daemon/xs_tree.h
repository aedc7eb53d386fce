/* xs_tree.h - the committed store: one record per node, keyed by path, as
 * xenstored keeps them in its TDB. A record holds the node's value, its
 * permissions, its generation count and the NUL-separated names of its
 * children (in creation order, the order DIRECTORY lists them).
 */
#ifndef XSIM_XS_TREE_H
#define XSIM_XS_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xs_perms.h"

#define XS_NO_GENERATION UINT64_MAX /* NO_GENERATION: a node that does not exist */

struct xs_node {
    char *path;
    uint64_t gen; /* global generation when last written */
    struct xs_perm *perms;
    unsigned nperms; /* >= 1 */
    char *data;
    unsigned datalen;
    char *children; /* "a\0b\0" */
    unsigned childlen;
};

/* A node with no value, no children and one permission entry. */
struct xs_node *xs_node_new(const char *path, unsigned owner, unsigned perms);
struct xs_node *xs_node_dup(const struct xs_node *n);
void xs_node_free(struct xs_node *n);
/* Replace value / permissions / children list. Return 0 or ENOMEM. */
int xs_node_set_data(struct xs_node *n, const void *data, unsigned len);
int xs_node_set_perms(struct xs_node *n, const struct xs_perm *p, unsigned np);
int xs_node_add_child(struct xs_node *n, const char *base);
/* Returns false if base is not listed. */
bool xs_node_del_child(struct xs_node *n, const char *base);

/* The size xenstored's quota check sees: its TDB record (a 24-byte header,
 * 8 bytes a permission, the value and the children list). */
size_t xs_node_size(const struct xs_node *n);

int xs_tree_init(void);
void xs_tree_fini(void);
/* The committed node at path, or NULL. */
struct xs_node *xs_tree_get(const char *path);
/* Store n (ownership passes), replacing any node at its path. 0 or ENOMEM. */
int xs_tree_put(struct xs_node *n);
void xs_tree_del(const char *path);

/* The global generation counter: every write and every transaction start
 * takes the next value. */
uint64_t xs_generation_next(void);
uint64_t xs_generation_now(void);

#endif
