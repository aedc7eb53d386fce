/* xs_dom.c - the store's domain records and the special nodes' permissions. */
#include "xs_dom.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain.h"
#include "xs_tree.h"

static struct xs_dom *doms;

int xs_quota_nodes = XS_QUOTA_NODES_DEFAULT;
unsigned xs_quota_watches = XS_QUOTA_WATCHES_DEFAULT;

/* A quota from the environment (xs_dom.h), 1..1000000; else the default. */
static unsigned quota_env(const char *name, unsigned dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (*end || n < 1 || n > 1000000) {
        fprintf(stderr, "xensimd: %s=%s: not 1..1000000; the default %u stays\n", name, v, dflt);
        return dflt;
    }
    return (unsigned)n;
}

struct special {
    const char *name;
    struct xs_perm *perms;
    unsigned nperms;
};

static struct special specials[] = {
    {"@introduceDomain", NULL, 0},
    {"@releaseDomain", NULL, 0},
};
#define NSPECIALS (sizeof(specials) / sizeof(specials[0]))

static struct xs_dom *dom_new(unsigned domid)
{
    struct xs_dom *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->domid = domid;
    d->gen = xs_generation_now();
    d->target = XS_NO_DOMID;
    d->next = doms;
    doms = d;
    return d;
}

int xs_dom_init(void)
{
    xs_quota_nodes = (int)quota_env("XENSIM_QUOTA_NODES", XS_QUOTA_NODES_DEFAULT);
    xs_quota_watches = quota_env("XENSIM_QUOTA_WATCHES", XS_QUOTA_WATCHES_DEFAULT);
    struct xs_dom *d0 = dom_new(0);
    if (!d0)
        return ENOMEM;
    d0->introduced = true;
    for (unsigned i = 0; i < NSPECIALS; i++) {
        /* Owner dom0, no access for others (set_dom_perms_default). */
        struct xs_perm p = {.id = 0, .perms = XSP_NONE};
        if (xs_special_set(specials[i].name, &p, 1))
            return ENOMEM;
    }
    return 0;
}

void xs_dom_fini(void)
{
    while (doms) {
        struct xs_dom *d = doms;
        doms = d->next;
        free(d);
    }
    for (unsigned i = 0; i < NSPECIALS; i++) {
        free(specials[i].perms);
        specials[i].perms = NULL;
        specials[i].nperms = 0;
    }
}

struct xs_dom *xs_dom_find(unsigned domid)
{
    for (struct xs_dom *d = doms; d; d = d->next)
        if (d->domid == domid)
            return d;
    return NULL;
}

struct xs_dom *xs_dom_get(unsigned domid)
{
    struct xs_dom *d = xs_dom_find(domid);
    if (d)
        return d;
    if (domid >= XSIM_DOMID_FIRST_RESERVED || !dom_exists(domid))
        return NULL;
    return dom_new(domid);
}

void xs_dom_forget(unsigned domid)
{
    if (domid == 0)
        return;
    for (struct xs_dom **pp = &doms; *pp;) {
        struct xs_dom *d = *pp;
        if (d->target == domid)
            d->target = XS_NO_DOMID;
        if (d->domid == domid) {
            *pp = d->next;
            free(d);
        } else {
            pp = &d->next;
        }
    }
}

unsigned xs_dom_target(unsigned domid)
{
    struct xs_dom *d = xs_dom_find(domid);
    return d ? d->target : XS_NO_DOMID;
}

int xs_dom_entries(unsigned domid)
{
    struct xs_dom *d = xs_dom_find(domid);
    return (domid != 0 && d) ? d->nbentry : 0;
}

void xs_dom_entries_add(unsigned domid, int n)
{
    struct xs_dom *d = xs_dom_get(domid);
    if (d)
        d->nbentry += n;
}

/* chk_domain_generation: was domid known when a node of generation gen was written? */
static bool known_at(unsigned domid, uint64_t gen)
{
    if (domid == 0)
        return true;
    struct xs_dom *d = xs_dom_find(domid);
    return d && d->gen <= gen;
}

void xs_dom_adjust_perms(struct xs_node *n)
{
    if (!known_at(n->perms[0].id, n->gen))
        n->perms[0].id = 0;
    for (unsigned i = 1; i < n->nperms; i++)
        if (!(n->perms[i].perms & XSP_IGNORE) && !known_at(n->perms[i].id, n->gen))
            n->perms[i].perms |= XSP_IGNORE;
}

void xs_dom_permrefs(struct xs_perm *p, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (!xs_dom_get(p[i].id))
            p[i].perms |= XSP_IGNORE;
}

static struct special *special(const char *name)
{
    for (unsigned i = 0; i < NSPECIALS; i++)
        if (strcmp(specials[i].name, name) == 0)
            return &specials[i];
    return NULL;
}

const struct xs_perm *xs_special_perms(const char *name, unsigned *n)
{
    struct special *s = special(name);
    if (!s)
        return NULL;
    *n = s->nperms;
    return s->perms;
}

int xs_special_set(const char *name, const struct xs_perm *p, unsigned n)
{
    struct special *s = special(name);
    if (!s)
        return EINVAL;
    struct xs_perm *copy = malloc(n * sizeof(*p));
    if (!copy)
        return ENOMEM;
    memcpy(copy, p, n * sizeof(*p));
    free(s->perms);
    s->perms = copy;
    s->nperms = n;
    return 0;
}

void xs_special_forget(unsigned domid)
{
    for (unsigned i = 0; i < NSPECIALS; i++) {
        struct special *s = &specials[i];
        if (!s->nperms)
            continue;
        if (s->perms[0].id == domid)
            s->perms[0].id = 0;
        unsigned out = 1;
        for (unsigned k = 1; k < s->nperms; k++)
            if (s->perms[k].id != domid)
                s->perms[out++] = s->perms[k];
        s->nperms = out;
    }
}
