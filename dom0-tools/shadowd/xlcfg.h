/* xlcfg.h - an ordinary xl domain config file, read with libxlutil and turned
 * into a libxl_domain_config for the libxl driver. A documented subset of xl
 * keys is understood (dom0-tools/README.md, "The libxl driver"); any other
 * top-level key is refused with FILE:LINE, so nothing is silently dropped. */
#ifndef SD_XLCFG_H
#define SD_XLCFG_H

#include <libxl.h>
#include <stdio.h>

/* Parse path for the domain called name into *out (initialised here).
 * ctx may be NULL (shadowd -n): then everything is checked but the vcpu
 * bitmap, which needs a ctx, is left for later. Messages go to err.
 * 0, or -1; on -1 *out is disposed. */
int sd_xlcfg_load(libxl_ctx *ctx, const char *path, const char *name, FILE *err,
                  libxl_domain_config *out);

#endif
