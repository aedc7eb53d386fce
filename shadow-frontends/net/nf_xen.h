/* nf_xen.h - the Xen public headers the netif frontend uses, with the
 * ring barriers (common/xen_barriers.h), and the sizes
 * that follow from them. The rings are shared with another domain: every
 * barrier carries its reason at the use. */
#ifndef NF_XEN_H
#define NF_XEN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "xen_barriers.h" /* before any xen/io header */

#include <xen/grant_table.h>
#include <xen/io/netif.h>
#include <xen/io/xenbus.h>

#define NF_PAGE      4096u
#define NF_RING_SIZE __CONST_RING_SIZE(netif_tx, NF_PAGE) /* 256; the rx ring too */
/* Granted tx pages, one per data slot in flight. With the rx buffers, a
 * connection grants 2 + NF_TX_PAGES + NF_RX_BUFS pages: two connections (the
 * old one may still be mapped by a paused domain) fit gntalloc's default
 * limit of 1024. */
#define NF_TX_PAGES 128u
#define NF_RX_BUFS  NF_RING_SIZE
/* Data slots one packet may use, either direction (netif.h's minimum every
 * backend supports; what Linux netfront uses too). */
#define NF_MAX_SLOTS XEN_NETIF_NR_SLOTS_MIN
/* The largest tx frame: the 16-bit size of a tx request. */
#define NF_MAX_FRAME XEN_NETIF_MAX_TX_SIZE
/* The largest rx packet: every slot a packet may use, full. */
#define NF_RX_MAX (NF_MAX_SLOTS * NF_PAGE)

#endif
