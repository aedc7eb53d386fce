/* xs_path.h - xenstore path rules (docs/misc/xenstore.txt, xenstored_core.c). */
#ifndef XSIM_XS_PATH_H
#define XSIM_XS_PATH_H

#include <stdbool.h>

/* An absolute node name xenstored accepts: starts with "/", no "//", no
 * trailing "/" (except "/" itself), at most XENSTORE_ABS_PATH_MAX bytes, only
 * [A-Za-z0-9-/_@]. */
bool xs_path_valid(const char *path);

/* A client's path made absolute: paths starting with "/" or "@" are kept,
 * others are relative to /local/domain/<domid> (dom0's socket clients too,
 * as in xenstored). Returns a malloc'd string or NULL (ENOMEM). */
char *xs_path_canonical(unsigned domid, const char *path);

/* The home of domid: "/local/domain/<domid>" into buf (at least 32 bytes). */
void xs_path_home(unsigned domid, char *buf, unsigned len);

/* Parent of a valid path ("/" for top-level nodes and for "/"), malloc'd. */
char *xs_path_parent(const char *path);
/* The last component of a valid path other than "/". */
const char *xs_path_base(const char *path);
/* parent + "/" + base, malloc'd. */
char *xs_path_join(const char *parent, const char *base);

/* True if child is parent or below it; everything is below "/". */
bool xs_path_is_child(const char *child, const char *parent);

/* atoi() as xenstored uses it on domids: sign and digits, no error. */
unsigned xs_atoi(const char *s);

#endif
