/* xsdev - write a device dir as libxl does: the dir with its permissions and
 * all its keys in one transaction, so a backend started the moment the dir
 * appears never sees it half made (the xenstore-* tools need two calls).
 *
 *   xsdev DIR PERMS KEY=VALUE...     PERMS like n5,r7 (owner 5, read for 7)
 */
#define _GNU_SOURCE
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

int main(int argc, char **argv)
{
    struct xs_permissions perms[8];
    unsigned np;
    if (argc < 3 || parse_perms(argv[2], perms, 8, &np) < 0) {
        fprintf(stderr, "usage: xsdev DIR PERMS KEY=VALUE...\n");
        return 2;
    }
    struct xs_handle *xs = xs_open(0);
    if (!xs) {
        fprintf(stderr, "xsdev: xs_open: %s\n", strerror(errno));
        return 1;
    }
    for (int tries = 0; tries < 16; tries++) {
        xs_transaction_t t = xs_transaction_start(xs);
        bool ok = t != XBT_NULL && xs_mkdir(xs, t, argv[1]) &&
                  xs_set_permissions(xs, t, argv[1], perms, np);
        for (int i = 3; ok && i < argc; i++) {
            char *eq = strchr(argv[i], '='), path[1024];
            if (!eq || snprintf(path, sizeof(path), "%s/%.*s", argv[1], (int)(eq - argv[i]),
                                argv[i]) >= (int)sizeof(path)) {
                fprintf(stderr, "xsdev: bad KEY=VALUE '%s'\n", argv[i]);
                return 2;
            }
            ok = xs_write(xs, t, path, eq + 1, (unsigned)strlen(eq + 1));
        }
        if (!ok) {
            fprintf(stderr, "xsdev: %s: %s\n", argv[1], strerror(errno));
            if (t != XBT_NULL)
                xs_transaction_end(xs, t, true);
            xs_close(xs);
            return 1;
        }
        if (xs_transaction_end(xs, t, false)) {
            xs_close(xs);
            return 0;
        }
        if (errno != EAGAIN)
            break;
    }
    fprintf(stderr, "xsdev: %s: commit: %s\n", argv[1], strerror(errno));
    xs_close(xs);
    return 1;
}
