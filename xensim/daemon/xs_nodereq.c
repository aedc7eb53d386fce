/* xs_nodereq.c - the wire requests on nodes: READ, WRITE, MKDIR, RM,
 * DIRECTORY, DIRECTORY_PART, GET_PERMS, SET_PERMS. Parsing and replies here;
 * the operations themselves in xs_ops.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xs_conn.h"
#include "xs_dom.h"
#include "xs_ops.h"
#include "xs_path.h"
#include "xs_store.h"
#include "xs_tree.h"

/* get_node_canonicalized() for a one-string request. */
static int get_onearg(struct xs_conn *c, const struct xs_req *r, unsigned perm,
                      struct xs_node **out, char **name)
{
    const char *arg = xs_req_onearg(r);
    if (!arg)
        return EINVAL;
    char *path = xs_path_canonical(c->who.domid, arg);
    if (!path)
        return ENOMEM;
    int err = xs_op_get(&c->who, path, perm, out);
    if (name && !err)
        *name = path;
    else
        free(path);
    return err;
}

int xs_h_read(struct xs_conn *c, const struct xs_req *r)
{
    struct xs_node *n;
    int err = get_onearg(c, r, XSP_READ, &n, NULL);
    if (err)
        return err;
    xs_reply(c, r, n->data, n->datalen);
    return 0;
}

int xs_h_directory(struct xs_conn *c, const struct xs_req *r)
{
    struct xs_node *n;
    int err = get_onearg(c, r, XSP_READ, &n, NULL);
    if (err)
        return err;
    xs_reply(c, r, n->children, n->childlen);
    return 0;
}

int xs_h_directory_part(struct xs_conn *c, const struct xs_req *r)
{
    if (xs_req_count(r) != 2)
        return EINVAL;
    char *path = xs_path_canonical(c->who.domid, r->body);
    if (!path)
        return ENOMEM;
    struct xs_node *n;
    int err = xs_op_get(&c->who, path, XSP_READ, &n);
    free(path);
    if (err)
        return err;
    unsigned off = xs_atoi(r->body + strlen(r->body) + 1);
    char buf[XENSTORE_PAYLOAD_MAX + 1];
    int g = snprintf(buf, sizeof(buf), "%" PRIu64, n->gen);
    unsigned genlen = (unsigned)g + 1;
    if (off >= n->childlen) {
        buf[genlen] = '\0'; /* an empty list */
        xs_reply(c, r, buf, genlen + 1);
        return 0;
    }
    unsigned len = 0, maxlen = XENSTORE_PAYLOAD_MAX - genlen - 1;
    const char *child = n->children + off;
    while (len + strlen(child) < maxlen) {
        len += (unsigned)strlen(child) + 1;
        child += strlen(child) + 1;
        if (off + len >= n->childlen)
            break;
    }
    memcpy(buf + genlen, n->children + off, len);
    if (off + len >= n->childlen)
        buf[genlen + len++] = '\0'; /* the end of the list */
    xs_reply(c, r, buf, genlen + len);
    return 0;
}

int xs_h_get_perms(struct xs_conn *c, const struct xs_req *r)
{
    struct xs_node *n;
    int err = get_onearg(c, r, XSP_READ, &n, NULL);
    if (err)
        return err;
    char buf[XENSTORE_PAYLOAD_MAX + 1];
    size_t len = xs_perms_format(n->perms, n->nperms, buf, sizeof(buf));
    if (!len)
        return E2BIG;
    xs_reply(c, r, buf, len);
    return 0;
}

int xs_h_write(struct xs_conn *c, const struct xs_req *r)
{
    const char *vec[1];
    if (xs_req_strings(r, vec, 1) < 1)
        return EINVAL;
    size_t off = strlen(vec[0]) + 1;
    char *path = xs_path_canonical(c->who.domid, vec[0]);
    if (!path)
        return ENOMEM;
    int err = xs_op_write(&c->who, path, r->body + off, r->len - (unsigned)off);
    free(path);
    if (err)
        return err;
    xs_reply_ok(c, r);
    return 0;
}

static int onearg_op(struct xs_conn *c, const struct xs_req *r,
                     int (*op)(const struct xs_who *, const char *))
{
    const char *arg = xs_req_onearg(r);
    if (!arg)
        return EINVAL;
    char *path = xs_path_canonical(c->who.domid, arg);
    if (!path)
        return ENOMEM;
    int err = op(&c->who, path);
    free(path);
    if (err)
        return err;
    xs_reply_ok(c, r);
    return 0;
}

int xs_h_mkdir(struct xs_conn *c, const struct xs_req *r)
{
    return onearg_op(c, r, xs_op_mkdir);
}

int xs_h_rm(struct xs_conn *c, const struct xs_req *r)
{
    return onearg_op(c, r, xs_op_rm);
}

int xs_h_set_perms(struct xs_conn *c, const struct xs_req *r)
{
    unsigned num = xs_req_count(r);
    if (num < 2)
        return EINVAL;
    num--;
    if (!xs_who_priv(&c->who) && num > XS_QUOTA_PERMS)
        return ENOSPC;
    struct xs_perm *p = calloc(num, sizeof(*p));
    if (!p)
        return ENOMEM;
    int err = xs_perms_parse(r->body + strlen(r->body) + 1, num, p);
    if (err)
        goto out;
    xs_dom_permrefs(p, num);
    if (p[0].perms & XSP_IGNORE) {
        err = ENOENT;
        goto out;
    }
    if (r->body[0] == '@') {
        unsigned ns;
        const struct xs_perm *sp = xs_special_perms(r->body, &ns);
        if (!sp) {
            err = EINVAL;
        } else {
            unsigned dom = c->who.domid;
            unsigned have = xs_perm_for(dom, xs_dom_target(dom), sp, ns);
            if ((have & (XSP_WRITE | XSP_OWNER)) != (XSP_WRITE | XSP_OWNER))
                err = EACCES;
            else
                err = xs_special_set(r->body, p, num);
        }
    } else {
        char *path = xs_path_canonical(c->who.domid, r->body);
        err = path ? xs_op_set_perms(&c->who, path, p, num) : ENOMEM;
        free(path);
    }
    if (!err)
        xs_reply_ok(c, r);
out:
    free(p);
    return err;
}
