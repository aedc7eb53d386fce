/* check.h - `shadowctl check`: validate a live store against the rules of
 * xenstore-schema/schema.md for Understudy's keys - formats and permissions
 * of our own keys, and the pairing of every frontend dir with its backend
 * dir - reporting each violation on its own line. */
#ifndef SD_CHECK_H
#define SD_CHECK_H

#include <stdio.h>
#include <xenstore.h>

struct check_result {
    unsigned violations;
    unsigned frontends, backends, keys; /* what was looked at */
};

/* Walk /local/domain/ * as dom0; print each violation to out. 0, or -1 if
 * the store could not be walked at all. */
int sd_check_store(struct xs_handle *xs, FILE *out, struct check_result *res);

#endif
