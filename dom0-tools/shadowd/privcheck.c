/* privcheck.c - shadowd-priv's rules for what a request may do (privcheck.h). */
#define _GNU_SOURCE
#include "privcheck.h"

#include <stdio.h>
#include <string.h>

void sd_privown_add(struct sd_privown *o, enum sd_driver_kind k, unsigned domid)
{
    if (sd_privown_has(o, k, domid))
        return;
    unsigned i = o->n < SD_PRIVOWN_MAX ? o->n++ : o->next++ % SD_PRIVOWN_MAX;
    o->v[i].kind = k;
    o->v[i].domid = domid;
}

void sd_privown_del(struct sd_privown *o, enum sd_driver_kind k, unsigned domid)
{
    for (unsigned i = 0; i < o->n; i++)
        if (o->v[i].kind == k && o->v[i].domid == domid)
            o->v[i].domid = 0; /* never a driver domain's */
}

bool sd_privown_has(const struct sd_privown *o, enum sd_driver_kind k, unsigned domid)
{
    for (unsigned i = 0; i < o->n; i++)
        if (o->v[i].kind == k && o->v[i].domid == domid && domid)
            return true;
    return false;
}

/* name is d's own or its standby's (NAME.2). */
static bool is_name_of(const struct sd_domconf *d, const char *name)
{
    size_t n = strlen(d->name);
    return !strcmp(name, d->name) || (!strncmp(name, d->name, n) && !strcmp(name + n, ".2"));
}

const struct sd_domconf *sd_privchk_name(const struct sd_conf *c, enum sd_driver_kind k,
                                         const char *name, char *why, size_t len)
{
    for (unsigned i = 0; i < c->ndoms; i++)
        if (c->doms[i].driver == k && is_name_of(&c->doms[i], name))
            return &c->doms[i];
    snprintf(why, len, "'%s' is not a %s domain of %s (nor its standby)", name, sd_driver_name(k),
             c->path);
    return NULL;
}

const struct sd_domconf *sd_privchk_create(const struct sd_conf *c, enum sd_driver_kind k,
                                           const char *dom, const char *name, char *why, size_t len)
{
    const struct sd_domconf *d = sd_conf_domain(c, dom);
    if (!d || d->driver != k) {
        snprintf(why, len, "'%s' is not a %s domain of %s", dom, sd_driver_name(k), c->path);
        return NULL;
    }
    if (!is_name_of(d, name)) {
        snprintf(why, len, "domain '%s' is created as '%s' or '%s.2', not '%s'", d->name, d->name,
                 d->name, name);
        return NULL;
    }
    return d;
}

int sd_privchk_owned(const struct sd_conf *c, const struct sd_privown *o, enum sd_driver_kind k,
                     unsigned domid, const struct sd_domstat *st, bool destroy, char *why,
                     size_t len)
{
    char w[160];
    if (st->run == SD_RUN_GONE) {
        snprintf(why, len, "domain %u does not exist", domid);
        return destroy ? 0 : -1;
    }
    if (sd_privown_has(o, k, domid))
        return 0;
    if (st->name[0] && sd_privchk_name(c, k, st->name, w, sizeof(w)))
        return 0;
    if (destroy && !st->name[0] && (st->run == SD_RUN_SHUTDOWN || st->run == SD_RUN_DYING))
        return 0;
    snprintf(why, len, "domain %u ('%s') is not one of the %s domains of %s", domid,
             st->name[0] ? st->name : "no name", sd_driver_name(k), c->path);
    return -1;
}
