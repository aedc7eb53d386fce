/* xsdev - write a device dir as libxl does: the dir with its permissions and
 * all its keys in one transaction, so a backend started the moment the dir
 * appears never sees it half made (the xenstore-* tools need two calls).
 *
 *   xsdev DIR PERMS KEY=VALUE...     PERMS like n5,r7 (owner 5, read for 7)
 */
#define _GNU_SOURCE
#include "xs_txn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xenstore.h>

static int parse_perms(char *s, struct xs_permissions *p, unsigned max, unsigned *n)
{
    *n = 0;
    for (char *save = NULL, *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        if (*n == max || !strchr("nrwb", t[0]))
            return -1;
        unsigned long id = strtoul(t + 1, &end, 10);
        if (end == t + 1 || *end)
            return -1;
        p[*n].id = (unsigned)id;
        p[*n].perms = t[0] == 'n'   ? XS_PERM_NONE
                      : t[0] == 'r' ? XS_PERM_READ
                      : t[0] == 'w' ? XS_PERM_WRITE
                                    : XS_PERM_READ | XS_PERM_WRITE;
        (*n)++;
    }
    return *n ? 0 : -1;
}

struct dev {
    const char *dir;
    struct xs_permissions perms[8];
    unsigned np;
    char **kv; /* KEY=VALUE, nkv of them */
    int nkv;
};

/* The dir, its permissions and its keys, in transaction t. */
static int write_dev(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
    struct dev *d = arg;
    if (!xs_mkdir(xs, t, d->dir) || !xs_set_permissions(xs, t, d->dir, d->perms, d->np))
        return -1;
    for (int i = 0; i < d->nkv; i++) {
        char *eq = strchr(d->kv[i], '='), path[1024];
        snprintf(path, sizeof(path), "%s/%.*s", d->dir, (int)(eq - d->kv[i]), d->kv[i]);
        if (!xs_write(xs, t, path, eq + 1, (unsigned)strlen(eq + 1)))
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct dev d = {.dir = argv[1], .kv = argv + 3, .nkv = argc - 3};
    if (argc < 3 || parse_perms(argv[2], d.perms, 8, &d.np) < 0) {
        fprintf(stderr, "usage: xsdev DIR PERMS KEY=VALUE...\n");
        return 2;
    }
    for (int i = 0; i < d.nkv; i++) {
        char *eq = strchr(d.kv[i], '=');
        if (!eq || strlen(d.dir) + 1 + (size_t)(eq - d.kv[i]) >= 1024) {
            fprintf(stderr, "xsdev: bad KEY=VALUE '%s'\n", d.kv[i]);
            return 2;
        }
    }
    struct xs_handle *xs = xs_open(0);
    if (!xs) {
        fprintf(stderr, "xsdev: xs_open: %s\n", strerror(errno));
        return 1;
    }
    const char *call;
    int r = xsu_txn(xs, write_dev, &d, &call);
    if (r < 0)
        fprintf(stderr, "xsdev: %s %s: %s\n", call ? call : "writing", d.dir, strerror(errno));
    xs_close(xs);
    return r < 0 ? 1 : 0;
}
