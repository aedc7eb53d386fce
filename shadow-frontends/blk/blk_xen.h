/* blk_xen.h - the Xen public headers the blkif frontend uses, with the
 * ring barriers (common/xen_barriers.h). The ring is
 * shared with another domain: every barrier carries its reason at the use. */
#ifndef BLK_XEN_H
#define BLK_XEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "xen_barriers.h" /* before any xen/io header */

#include <xen/grant_table.h>
#include <xen/io/blkif.h>
#include <xen/io/protocols.h>
#include <xen/io/xenbus.h>

#define BLK_PAGE_SIZE      4096u
#define BLK_SECTOR_SHIFT   9u /* blkif sector numbers are in 512-byte units */
#define BLK_SECTORS_PER_PG (BLK_PAGE_SIZE >> BLK_SECTOR_SHIFT)
/* Segments an indirect page holds. */
#define BLK_SEGS_PER_INDIRECT (BLK_PAGE_SIZE / sizeof(struct blkif_request_segment))

#endif
