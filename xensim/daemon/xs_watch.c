/* xs_watch.c - WATCH, UNWATCH, RESET_WATCHES and delivering events. */
#define _GNU_SOURCE
#include "xs_watch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xs_conn.h"
#include "xs_dom.h"
#include "xs_path.h"
#include "xs_trans.h"
#include "xs_tree.h"

static void watch_free(struct xs_watch *w)
{
    if (!w)
        return;
    free(w->node);
    free(w->token);
    free(w);
}

static void count_watches(const struct xs_conn *c, int n)
{
    if (xs_who_priv(&c->who))
        return;
    struct xs_dom *d = xs_dom_get(c->who.domid);
    if (!d)
        return;
    if (n < 0 && d->nbwatch < (unsigned)-n)
        d->nbwatch = 0;
    else
        d->nbwatch += (unsigned)n;
}

/* The path an event for `path` carries on watch w: relative if w is. */
static const char *event_path(const struct xs_conn *c, const struct xs_watch *w, const char *path)
{
    if (!w->relative)
        return path;
    char home[32];
    xs_path_home(c->who.domid, home, sizeof(home));
    size_t len = strlen(home);
    if (strncmp(path, home, len) != 0)
        return path;
    path += len;
    if (*path == '/')
        path++;
    return path;
}

static bool can_read(const struct xs_conn *c, const struct xs_perm *p, unsigned np)
{
    unsigned dom = c->who.domid;
    return xs_perm_for(dom, xs_dom_target(dom), p, np) & XSP_READ;
}

/* watch_permitted(): the watcher may read the node or its parent, or could
 * read the node under its old permissions. */
static bool permitted(const struct xs_conn *c, const char *path, const struct xs_perm *p,
                      unsigned np, const struct xs_perm *old, unsigned nold)
{
    if (old && can_read(c, old, nold))
        return true;
    if (!p) {
        struct xs_node *n = xs_tree_get(path);
        if (!n)
            return false;
        xs_dom_adjust_perms(n);
        p = n->perms;
        np = n->nperms;
    }
    if (can_read(c, p, np))
        return true;
    char *parent = xs_path_parent(path);
    if (!parent)
        return false;
    struct xs_node *n = xs_tree_get(parent);
    free(parent);
    if (!n)
        return false;
    xs_dom_adjust_perms(n);
    return can_read(c, n->perms, n->nperms);
}

void xs_watch_fire(const char *path, bool exact, const struct xs_perm *perms, unsigned nperms,
                   const struct xs_perm *old, unsigned nold)
{
    for (struct xs_conn *c = xs_conn_list(); c; c = c->next) {
        int allowed = -1; /* looked up once a watch of c matches */
        for (struct xs_watch *w = c->watches; w; w = w->next) {
            bool match = exact ? strcmp(path, w->node) == 0 : xs_path_is_child(path, w->node);
            if (!match)
                continue;
            if (allowed < 0)
                allowed = permitted(c, path, perms, nperms, old, nold);
            if (allowed)
                xs_conn_event(c, event_path(c, w, path), w->token);
        }
    }
}

void xs_watch_fire_special(const char *name)
{
    unsigned np;
    const struct xs_perm *p = xs_special_perms(name, &np);
    if (!p)
        return;
    for (struct xs_conn *c = xs_conn_list(); c; c = c->next) {
        if (!c->watches || !can_read(c, p, np))
            continue;
        for (struct xs_watch *w = c->watches; w; w = w->next)
            if (strcmp(name, w->node) == 0)
                xs_conn_event(c, name, w->token);
    }
}

void xs_watch_drop_all(struct xs_conn *c)
{
    int n = 0;
    while (c->watches) {
        struct xs_watch *w = c->watches;
        c->watches = w->next;
        watch_free(w);
        n++;
    }
    count_watches(c, -n);
}

int xs_h_watch(struct xs_conn *c, const struct xs_req *r)
{
    const char *vec[2];
    if (xs_req_strings(r, vec, 2) != 2)
        return EINVAL;
    struct xs_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return ENOMEM;
    if (vec[0][0] == '@') {
        if (strlen(vec[0]) > XENSTORE_REL_PATH_MAX) {
            free(w);
            return EINVAL;
        }
        w->node = strdup(vec[0]);
    } else {
        w->relative = vec[0][0] != '/';
        w->node = xs_path_canonical(c->who.domid, vec[0]);
    }
    w->token = strdup(vec[1]);
    if (!w->node || !w->token) {
        watch_free(w);
        return ENOMEM;
    }
    if (w->node[0] != '@' && !xs_path_valid(w->node)) {
        watch_free(w);
        return EINVAL;
    }
    struct xs_watch **pp = &c->watches;
    for (; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->node, w->node) == 0 && strcmp((*pp)->token, w->token) == 0) {
            watch_free(w);
            return EEXIST;
        }
    }
    struct xs_dom *d = xs_who_priv(&c->who) ? NULL : xs_dom_get(c->who.domid);
    if (d && d->nbwatch > XS_QUOTA_WATCHES) {
        watch_free(w);
        return E2BIG;
    }
    *pp = w;
    count_watches(c, 1);
    xs_reply_ok(c, r);
    /* Fired once up front, after the reply. */
    xs_conn_event(c, event_path(c, w, w->node), w->token);
    return 0;
}

int xs_h_unwatch(struct xs_conn *c, const struct xs_req *r)
{
    const char *vec[2];
    if (xs_req_strings(r, vec, 2) != 2)
        return EINVAL;
    char *node = xs_path_canonical(c->who.domid, vec[0]);
    if (!node)
        return ENOMEM;
    for (struct xs_watch **pp = &c->watches; *pp; pp = &(*pp)->next) {
        struct xs_watch *w = *pp;
        if (strcmp(w->node, node) == 0 && strcmp(w->token, vec[1]) == 0) {
            *pp = w->next;
            watch_free(w);
            free(node);
            count_watches(c, -1);
            xs_reply_ok(c, r);
            return 0;
        }
    }
    free(node);
    return ENOENT;
}

int xs_h_reset_watches(struct xs_conn *c, const struct xs_req *r)
{
    xs_watch_drop_all(c);
    xs_tx_drop_all(c);
    xs_reply_ok(c, r);
    return 0;
}
