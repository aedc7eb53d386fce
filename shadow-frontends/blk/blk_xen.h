/* blk_xen.h - the Xen public headers the blkif frontend uses, with the
 * memory barriers xen/io/ring.h expects a guest to supply. The ring is
 * shared with another domain: every barrier carries its reason at the use. */
#ifndef BLK_XEN_H
#define BLK_XEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* With the legacy interface version a guest gets by default, ring.h maps
 * xen_mb() and friends onto these. */
#ifndef mb
#define mb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#endif

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
