/* xs_control.c - CONTROL (dom0 only): the commands of 4.17's
 * xenstored_control.c that make sense here; others are EINVAL. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "xs_conn.h"
#include "xs_dom.h"
#include "xs_ops.h" /* the handler prototypes */
#include "xs_path.h"

typedef int control_fn(struct xs_conn *c, const struct xs_req *r, const char **par, unsigned n);

static int ctl_ack_noargs(struct xs_conn *c, const struct xs_req *r, const char **par, unsigned n)
{
    (void)par;
    if (n)
        return EINVAL;
    xs_reply_ok(c, r);
    return 0;
}

static int ctl_log(struct xs_conn *c, const struct xs_req *r, const char **par, unsigned n)
{
    if (n != 1 || (strcmp(par[0], "on") && strcmp(par[0], "off")))
        return EINVAL;
    xs_reply_ok(c, r);
    return 0;
}

static int ctl_onearg_ack(struct xs_conn *c, const struct xs_req *r, const char **par, unsigned n)
{
    (void)par;
    if (n != 1)
        return EINVAL;
    xs_reply_ok(c, r);
    return 0;
}

static int ctl_memreport(struct xs_conn *c, const struct xs_req *r, const char **par, unsigned n)
{
    (void)par;
    if (n > 1)
        return EINVAL;
    xs_reply_ok(c, r);
    return 0;
}

static int ctl_print(struct xs_conn *c, const struct xs_req *r, const char **par, unsigned n)
{
    if (n != 1)
        return EINVAL;
    fprintf(stderr, "xensim xenstored: %s\n", par[0]);
    xs_reply_ok(c, r);
    return 0;
}

static int ctl_quota(struct xs_conn *c, const struct xs_req *r, const char **par, unsigned n)
{
    char buf[1024];
    int len;
    if (n == 0) {
        len = snprintf(buf, sizeof(buf),
                       "%-17s: %8d Nodes per domain\n%-17s: %8d Watches per domain\n"
                       "%-17s: %8d Transactions per domain\n"
                       "%-17s: %8d Outstanding requests per domain\n"
                       "%-17s: %8d Max. number of accessed nodes per transaction\n"
                       "%-17s: %8d Max. size of a node\n%-17s: %8d Max. number of permissions "
                       "per node\n",
                       "nodes", XS_QUOTA_NODES, "watches", XS_QUOTA_WATCHES, "transactions",
                       XS_QUOTA_TRANSACTION, "outstanding", XS_OUTSTANDING_MAX, "transaction-nodes",
                       XS_QUOTA_TRANS_NODES, "node-size", XS_QUOTA_NODE_SIZE, "permissions",
                       XS_QUOTA_PERMS);
    } else if (n == 1) {
        unsigned domid = xs_atoi(par[0]);
        struct xs_dom *d = xs_dom_find(domid);
        if (!d)
            return ENOENT;
        unsigned ntx = 0;
        for (struct xs_conn *k = xs_conn_list(); k; k = k->next)
            if (k->who.domid == domid)
                ntx += k->ntxs;
        len = snprintf(buf, sizeof(buf), "Domain %u:\n%-16s: %8d\n%-16s: %8u\n%-16s: %8u\n", domid,
                       "nodes", d->nbentry, "watches", d->nbwatch, "transactions", ntx);
    } else {
        return EINVAL;
    }
    xs_reply(c, r, buf, (size_t)len + 1);
    return 0;
}

static int ctl_help(struct xs_conn *c, const struct xs_req *r, const char **par, unsigned n);

static const struct {
    const char *cmd;
    control_fn *fn;
    const char *pars;
} cmds[] = {
    {"check", ctl_ack_noargs, ""},
    {"log", ctl_log, "on|off"},
    {"logfile", ctl_onearg_ack, "<file>"},
    {"memreport", ctl_memreport, "[<file>]"},
    {"print", ctl_print, "<string>"},
    {"quota", ctl_quota, "[<domid>]"},
    {"help", ctl_help, ""},
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static int ctl_help(struct xs_conn *c, const struct xs_req *r, const char **par, unsigned n)
{
    (void)par;
    if (n)
        return EINVAL;
    char buf[1024];
    size_t len = 0;
    for (unsigned i = 0; i < NCMDS; i++)
        len +=
            (size_t)snprintf(buf + len, sizeof(buf) - len, "%-15s %s\n", cmds[i].cmd, cmds[i].pars);
    xs_reply(c, r, buf, len + 1);
    return 0;
}

int xs_h_control(struct xs_conn *c, const struct xs_req *r)
{
    if (!xs_who_priv(&c->who))
        return EACCES;
    const char *vec[16];
    unsigned n = xs_req_strings(r, vec, 16);
    if (n < 1)
        return EINVAL;
    if (n > 16)
        return EINVAL;
    for (unsigned i = 0; i < NCMDS; i++)
        if (strcmp(vec[0], cmds[i].cmd) == 0)
            return cmds[i].fn(c, r, vec + 1, n - 1);
    return EINVAL;
}
