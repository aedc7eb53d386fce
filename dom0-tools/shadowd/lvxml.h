/* lvxml.h - the operator's libvirt domain definition (an XML file, as for
 * `virsh create`), read with libxml2: checked for shadowd -n, and turned
 * into the XML of one domain to create under a given name. */
#ifndef SD_LVXML_H
#define SD_LVXML_H

#include <stdio.h>

#define SD_LVXML_MAX (1u << 20) /* bytes of a definition */

/* Check path: a <domain type=...> with a <name> equal to name. Messages go to
 * err as "PATH:LINE: ..."; 0 or -1. */
int sd_lvxml_check(const char *path, const char *name, FILE *err);

/* The definition of path as a string, renamed to as_name (and without its
 * <uuid>, which two domains cannot share) if as_name differs from its own.
 * NULL with a message in err. Free with free(). */
char *sd_lvxml_load(const char *path, const char *as_name, char *err, size_t errlen);

#endif
