/* xs_perms.h - node permissions as xenstored keeps them.
 *
 * The first entry names the owner and gives everyone not listed their
 * access; later entries grant listed domains theirs. The owner, dom0 and a
 * domain targeting the owner (SET_TARGET) have full access.
 */
#ifndef XSIM_XS_PERMS_H
#define XSIM_XS_PERMS_H

#include <stddef.h>

/* Values of XS_PERM_* in xenstore_lib.h. */
#define XSP_NONE   0x00u
#define XSP_READ   0x01u
#define XSP_WRITE  0x02u
#define XSP_OWNER  0x08u
#define XSP_IGNORE 0x10u /* entry names a domain that is gone (XSA-322) */

#define XS_NO_DOMID 0xFFFFFFFFu

struct xs_perm {
    unsigned id;
    unsigned perms;
};

/* Parse n strings like "r5" ("r", "w", "b", "n" then a strtol(...,0) id), as
 * xs_strings_to_perms does. s holds at least n NUL-terminated strings.
 * Returns 0 or EINVAL. */
int xs_perms_parse(const char *s, unsigned n, struct xs_perm *out);

/* Format as GET_PERMS replies ("n0\0r5\0"); returns the length, or 0 if it
 * does not fit in cap. */
size_t xs_perms_format(const struct xs_perm *p, unsigned n, char *buf, size_t cap);

/* The access (XSP_READ|XSP_WRITE|XSP_OWNER bits) that domid, targeting
 * target (or XS_NO_DOMID), has under perms p. */
unsigned xs_perm_for(unsigned domid, unsigned target, const struct xs_perm *p, unsigned n);

#endif
