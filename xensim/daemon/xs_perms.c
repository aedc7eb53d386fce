/* xs_perms.c - parsing, printing and evaluating node permissions. */
#include "xs_perms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int xs_perms_parse(const char *s, unsigned n, struct xs_perm *out)
{
    const char *p = s;
    for (unsigned i = 0; i < n; i++) {
        switch (*p) {
        case 'r':
            out[i].perms = XSP_READ;
            break;
        case 'w':
            out[i].perms = XSP_WRITE;
            break;
        case 'b':
            out[i].perms = XSP_READ | XSP_WRITE;
            break;
        case 'n':
            out[i].perms = XSP_NONE;
            break;
        default:
            return EINVAL;
        }
        p++;
        char *end;
        out[i].id = (unsigned)strtol(p, &end, 0);
        if (*end || !*p)
            return EINVAL;
        p = end + 1;
    }
    return 0;
}

size_t xs_perms_format(const struct xs_perm *p, unsigned n, char *buf, size_t cap)
{
    size_t len = 0;
    for (unsigned i = 0; i < n; i++) {
        char c;
        switch (p[i].perms & ~XSP_IGNORE) {
        case XSP_WRITE:
            c = 'w';
            break;
        case XSP_READ:
            c = 'r';
            break;
        case XSP_READ | XSP_WRITE:
            c = 'b';
            break;
        default:
            c = 'n';
            break;
        }
        int k = snprintf(buf + len, cap - len, "%c%d", c, (int)p[i].id);
        if (k < 0 || (size_t)k + 1 > cap - len)
            return 0;
        len += (size_t)k + 1; /* keep the NUL */
    }
    return len;
}

unsigned xs_perm_for(unsigned domid, unsigned target, const struct xs_perm *p, unsigned n)
{
    const unsigned all = XSP_READ | XSP_WRITE | XSP_OWNER;
    if (domid == 0 || p[0].id == domid || (target != XS_NO_DOMID && p[0].id == target))
        return all;
    for (unsigned i = 1; i < n; i++)
        if (!(p[i].perms & XSP_IGNORE) &&
            (p[i].id == domid || (target != XS_NO_DOMID && p[i].id == target)))
            return p[i].perms & all;
    return p[0].perms & all;
}
