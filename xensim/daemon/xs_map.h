/* xs_map.h - a string-keyed hash map for the xenstore module.
 *
 * The map stores the key pointer it is given, not a copy: the key must live
 * as long as its entry (callers key by a string inside the value).
 */
#ifndef XSIM_XS_MAP_H
#define XSIM_XS_MAP_H

#include <stddef.h>

struct xs_map;

struct xs_map *xs_map_new(void);
/* Free the map; values are the caller's. NULL-safe. */
void xs_map_free(struct xs_map *m);
size_t xs_map_count(const struct xs_map *m);

void *xs_map_get(const struct xs_map *m, const char *key);
/* Insert or replace (key and value). Returns 0 or ENOMEM. */
int xs_map_put(struct xs_map *m, const char *key, void *val);
/* Remove key; returns its value or NULL. */
void *xs_map_del(struct xs_map *m, const char *key);

/* Call fn for every value, in no particular order. fn must not modify the map. */
void xs_map_foreach(const struct xs_map *m, void (*fn)(void *val, void *arg), void *arg);

#endif
