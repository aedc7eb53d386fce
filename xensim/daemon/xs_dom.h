/* xs_dom.h - what the store knows about domains (xenstored_domain.c's
 * struct domain): when it learnt of each one, whether it is introduced, its
 * node and watch counts, its SET_TARGET, and the permissions of the special
 * nodes @introduceDomain and @releaseDomain.
 *
 * Stale domids (XSA-322): a permission entry only counts if its domain is
 * known and was known before the node was last written (compared by
 * generation count); otherwise the entry is ignored, and an owner that is
 * gone reads as dom0. So a later domain reusing a domid inherits nothing.
 */
#ifndef XSIM_XS_DOM_H
#define XSIM_XS_DOM_H

#include <stdbool.h>
#include <stdint.h>

#include "xs_perms.h"

struct xs_node;

/* 4.17's default quotas (xenstored_core.c). Nodes and watches per domain
 * can be raised as xenstored's --entry-nb and --watch-nb raise them, by
 * XENSIM_QUOTA_NODES and XENSIM_QUOTA_WATCHES in xensimd's environment (read
 * by xs_dom_init): a driver domain owns about 24 nodes a disk (its backend
 * dir) and its blkbacks hold 3 watches a disk, so with the defaults one
 * serves at most 41 disks (bench/parts/scale.sh raises them to serve 100). */
#define XS_QUOTA_NODES_DEFAULT   1000
#define XS_QUOTA_WATCHES_DEFAULT 128u
extern int xs_quota_nodes;
extern unsigned xs_quota_watches;
#define XS_QUOTA_NODES       xs_quota_nodes
#define XS_QUOTA_WATCHES     xs_quota_watches
#define XS_QUOTA_NODE_SIZE   2048
#define XS_QUOTA_TRANSACTION 10
#define XS_QUOTA_PERMS       5
#define XS_QUOTA_TRANS_NODES 1024

struct xs_dom {
    unsigned domid;
    uint64_t gen; /* generation when the store learnt of the domain */
    bool introduced;
    bool shutdown;   /* @releaseDomain fired for its shutdown (RESUME clears) */
    unsigned target; /* SET_TARGET, or XS_NO_DOMID */
    int nbentry;     /* nodes it owns */
    unsigned nbwatch;
    struct xs_dom *next;
};

int xs_dom_init(void); /* dom0, introduced, and the special nodes' default perms */
void xs_dom_fini(void);

struct xs_dom *xs_dom_find(unsigned domid);
/* Find, or create if the hypervisor has the domain (dom_exists). */
struct xs_dom *xs_dom_get(unsigned domid);
/* Forget the domain: its perms become stale, targets on it are dropped. */
void xs_dom_forget(unsigned domid);

unsigned xs_dom_target(unsigned domid);
/* nodes owned by domid, as the quota check sees them (0 for dom0) */
int xs_dom_entries(unsigned domid);
void xs_dom_entries_add(unsigned domid, int n);

/* Apply the stale-domid rule to n's permissions in place. */
void xs_dom_adjust_perms(struct xs_node *n);
/* For SET_PERMS: mark entries naming domains that do not exist as ignored. */
void xs_dom_permrefs(struct xs_perm *p, unsigned n);

/* Special nodes: perms of "@introduceDomain"/"@releaseDomain", or NULL. */
const struct xs_perm *xs_special_perms(const char *name, unsigned *n);
/* Replace them (copied). Returns 0, EINVAL (not special) or ENOMEM. */
int xs_special_set(const char *name, const struct xs_perm *p, unsigned n);
/* Drop domid from both (owner becomes dom0). */
void xs_special_forget(unsigned domid);

#endif
