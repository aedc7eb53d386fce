/* fake_xs.h - an in-memory xenstore for fuzz targets: libxenstore's calls
 * (xs_read, xs_directory, xs_write, transactions, watches), defined here so
 * that the project's own readers run unchanged over values from the input. */
#ifndef FAKE_XS_H
#define FAKE_XS_H

#include <stddef.h>
#include <xenstore.h>

/* The handle every reader gets. */
struct xs_handle *fxs_handle(void);
/* Empty the store. */
void fxs_reset(void);
/* Set path to len bytes of value (a directory node is created by any child);
 * a path xenstored would refuse (relative, empty component, other characters) is ignored. */
void fxs_set(const char *path, const void *value, size_t len);
/* Set path's permissions (a node is created n0 by fxs_set, xs_write, xs_mkdir;
 * path must exist). 0, or -1. */
int fxs_set_perms(const char *path, const struct xs_permissions *p, unsigned n);
/* Make a node of every path's missing ancestor, with an empty value (as xenstored has). */
void fxs_fill_dirs(void);
/* Load "path=value" lines (paths relative to base unless absolute). */
void fxs_load(const char *base, const char *text, size_t len);

#endif
