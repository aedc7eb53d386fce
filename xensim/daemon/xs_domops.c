/* xs_domops.c - INTRODUCE, RELEASE, IS_DOMAIN_INTRODUCED, RESUME,
 * SET_TARGET, GET_DOMAIN_PATH, and the store's side of a domain's life. */
#define _GNU_SOURCE
#include "xs_domain.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "domain.h"
#include "xs_conn.h"
#include "xs_dom.h"
#include "xs_ops.h"
#include "xs_path.h"
#include "xs_trans.h"
#include "xs_watch.h"

#define DOMID_SELF 0x7FF0u

static unsigned char released[XSIM_DOMID_FIRST_RESERVED / 8];

bool xs_domain_released(unsigned domid)
{
    return domid < XSIM_DOMID_FIRST_RESERVED && (released[domid / 8] & (1u << (domid % 8)));
}

void xs_domain_set_released(unsigned domid, bool on)
{
    if (domid >= XSIM_DOMID_FIRST_RESERVED)
        return;
    if (on)
        released[domid / 8] |= (unsigned char)(1u << (domid % 8));
    else
        released[domid / 8] &= (unsigned char)~(1u << (domid % 8));
}

int xs_domain_introduce(unsigned domid)
{
    if (domid == 0)
        return 0; /* dom0 is introduced from the start */
    struct xs_dom *d = xs_dom_get(domid);
    if (!d)
        return EINVAL; /* cannot map a page of a domain that does not exist */
    if (d->introduced) {
        for (struct xs_conn *c = xs_conn_list(); c; c = c->next) {
            if (c->who.domid == domid) {
                xs_watch_drop_all(c);
                xs_tx_drop_all(c);
            }
        }
        return 0;
    }
    d->introduced = true;
    d->shutdown = false;
    xs_domain_set_released(domid, false);
    xs_watch_fire_special("@introduceDomain");
    return 0;
}

void xs_domain_gone(unsigned domid)
{
    if (domid == 0)
        return;
    xs_conn_close_domain(domid);
    xs_op_remove_owned(domid);
    xs_special_forget(domid);
    xs_dom_forget(domid);
}

/* find_connected_domain() */
static int connected(unsigned domid, struct xs_dom **out)
{
    struct xs_dom *d = xs_dom_find(domid);
    if (!d || !d->introduced)
        return ENOENT;
    *out = d;
    return 0;
}

/* onearg_domain() */
static int onearg_domain(const struct xs_req *r, struct xs_dom **out)
{
    const char *arg = xs_req_onearg(r);
    if (!arg)
        return EINVAL;
    unsigned domid = xs_atoi(arg);
    if (!domid)
        return EINVAL;
    return connected(domid, out);
}

/* domid|mfn|evtchn| */
int xs_h_introduce(struct xs_conn *c, const struct xs_req *r)
{
    const char *vec[3];
    if (xs_req_strings(r, vec, 3) < 3)
        return EINVAL;
    unsigned domid = xs_atoi(vec[0]);
    int port = (int)xs_atoi(vec[2]);
    if (port <= 0)
        return EINVAL;
    int err = xs_domain_introduce(domid);
    if (err)
        return err;
    xs_reply_ok(c, r);
    return 0;
}

int xs_h_release(struct xs_conn *c, const struct xs_req *r)
{
    struct xs_dom *d;
    int err = onearg_domain(r, &d);
    if (err)
        return err;
    unsigned domid = d->domid;
    xs_domain_gone(domid);
    xs_domain_set_released(domid, true);
    xs_watch_fire_special("@releaseDomain");
    xs_reply_ok(c, r);
    return 0;
}

int xs_h_resume(struct xs_conn *c, const struct xs_req *r)
{
    struct xs_dom *d;
    int err = onearg_domain(r, &d);
    if (err)
        return err;
    d->shutdown = false;
    xs_reply_ok(c, r);
    return 0;
}

int xs_h_is_domain_introduced(struct xs_conn *c, const struct xs_req *r)
{
    const char *arg = xs_req_onearg(r);
    if (!arg)
        return EINVAL;
    unsigned domid = xs_atoi(arg);
    struct xs_dom *d = xs_dom_find(domid);
    bool yes = domid == DOMID_SELF || (d && d->introduced);
    xs_reply(c, r, yes ? "T" : "F", 2);
    return 0;
}

int xs_h_set_target(struct xs_conn *c, const struct xs_req *r)
{
    const char *vec[2];
    if (xs_req_strings(r, vec, 2) < 2)
        return EINVAL;
    struct xs_dom *d, *t;
    int err = connected(xs_atoi(vec[0]), &d);
    if (!err)
        err = connected(xs_atoi(vec[1]), &t);
    if (err)
        return err;
    d->target = t->domid;
    xs_reply_ok(c, r);
    return 0;
}

int xs_h_get_domain_path(struct xs_conn *c, const struct xs_req *r)
{
    const char *arg = xs_req_onearg(r);
    if (!arg)
        return EINVAL;
    char path[32];
    xs_path_home(xs_atoi(arg), path, sizeof(path));
    xs_reply(c, r, path, strlen(path) + 1);
    return 0;
}
