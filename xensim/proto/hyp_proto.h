/* hyp_proto.h - wire protocol between the drop-in libxengnttab.so.1 /
 * libxenevtchn.so.1 (xensim/lib) and the daemon's grant-table and
 * event-channel module (hyp_*.c), on <dir>/dom<N>/hyp.sock. Framing is msg.h.
 *
 * One connection is one library handle (xengnttab, xengntshr or xenevtchn)
 * and acts as the domain whose socket it reached. Its first message is
 * HYP_HELLO. Every request gets exactly one reply carrying the request's op
 * and seq, err 0 or a positive errno, and the reply body below, except
 * HYP_EVT_NOTIFY and HYP_EVT_UNMASK, which get none: the daemon silently
 * drops invalid ones (as Linux's evtchn write() ignores ports it does not
 * own). A malformed message closes the connection.
 * HYP_BYE (no reply) says the connection's end is an orderly close by a live
 * process, not its death; it matters only for a domain's main process, whose
 * death is the domain's (no unmap-notify) but whose close notifies.
 *
 * Events do not pass through the daemon once a channel is up. Every bind
 * (HYP_EVT_BIND_*) passes one fd, the port's doorbell: the sending end of a
 * SOCK_DGRAM socketpair whose other end the library reads. A datagram on it
 * is an event for that port, sent with MSG_DONTWAIT (a full doorbell is an
 * event already pending, so nothing waits on a slow or hostile receiver).
 * The daemon rings it for the events it makes (the bind's initial event,
 * unmap-notify, virqs, HYP_EVT_NOTIFY) and hands it to the peer port's
 * handle (HYP_EVT_BIND_INTERDOMAIN's reply, HYP_EVT_PEER), which rings it
 * directly on xenevtchn_notify. Masking and pending are the library's own
 * state, as they are the evtchn driver's per handle, so HYP_EVT_UNMASK is
 * not sent (the daemon ignores it). A port's doorbell reaches only that
 * port: a peer can ring nothing but the channel it is bound to.
 *
 * Which doorbell a port's notify rings changes when its peer does (bound,
 * closed). The evtchn HYP_HELLO reply carries a read-only page of
 * HYP_NR_PORTS generation counts, one per port, that the daemon bumps on each
 * such change; the library asks HYP_EVT_PEER again when the count it cached
 * differs. The handle's "event socket" (passed with HYP_HELLO) carries no
 * messages: the library watches it only to see the daemon's end close.
 *
 * Grant pages are memfds created by the sharing library (sealed against
 * shrinking), passed with HYP_SHR_SHARE; mappers get an fd per object with
 * HYP_GNT_MAP (read-only ones for read-only grants or mappings). For
 * xengnttab_grant_copy the library reads a granting domain's table directly:
 * HYP_GNT_GTAB returns a read-only fd of the daemon's table (struct
 * hyp_gtab_*), and HYP_GNT_OBJ the fd of the object behind one grant, which
 * the library caches by object id (ids are never reused).
 */
#ifndef XSIM_HYP_PROTO_H
#define XSIM_HYP_PROTO_H

#include <stdint.h>

#define HYP_PROTO_VERSION 2u

#define HYP_PAGE_SIZE 4096u
/* Grant entries per domain: 64 v1 grant frames (Xen's default max_grant_frames). */
#define HYP_NR_GRANTS 32768u
/* Refs below this are never handed out (Linux's GNTTAB_NR_RESERVED_ENTRIES). */
#define HYP_FIRST_GRANT 8u
/* Event channel ports per domain (the 2-level ABI's limit for 64-bit guests). */
#define HYP_NR_PORTS 4096u
/* At most this many refs per HYP_GNT_MAP, so that one reply can carry an fd each. */
#define HYP_MAP_MAX_REFS 253u
/* Ceiling for xengnttab_set_max_grants (gntdev's "limit" parameter, 64Ki). */
#define HYP_MAX_GRANTS_LIMIT 65536u
/* "none" for notify offsets and ports, and "unrestricted" for handles. */
#define HYP_NONE 0xFFFFFFFFu

enum hyp_kind {
    HYP_KIND_GNTTAB = 1,
    HYP_KIND_GNTSHR = 2,
    HYP_KIND_EVTCHN = 3,
};

enum hyp_op {
    HYP_HELLO = 1,            /* hyp_hello -> hyp_hello_reply; evtchn: 1 fd, the event socket,
                               * and the reply 1 fd, the generation page */
    HYP_GNT_SET_MAX,          /* hyp_u32 (count) -> empty */
    HYP_GNT_MAP,              /* hyp_map_req + refs -> hyp_map_reply + pages, fds */
    HYP_GNT_UNMAP,            /* hyp_u32 (map id) -> empty */
    HYP_GNT_GTAB,             /* hyp_u32 (domid) -> hyp_u32 (entries), 1 fd (read-only table) */
    HYP_GNT_OBJ,              /* hyp_obj_req -> hyp_obj_reply, 1 fd */
    HYP_SHR_SHARE,            /* hyp_share_req, 1 fd (memfd) -> hyp_share_reply + refs */
    HYP_SHR_UNSHARE,          /* hyp_u32 (object id) -> empty */
    HYP_EVT_BIND_UNBOUND,     /* hyp_u32 (remote domid), 1 fd (doorbell) -> hyp_port_reply */
    HYP_EVT_BIND_INTERDOMAIN, /* hyp_bind_req, 1 fd -> hyp_port_reply [+ 1 fd: the peer's bell] */
    HYP_EVT_BIND_VIRQ,        /* hyp_u32 (virq), 1 fd -> hyp_port_reply */
    HYP_EVT_UNBIND,           /* hyp_u32 (port) -> empty */
    HYP_EVT_RESTRICT,         /* hyp_u32 (domid) -> empty */
    HYP_EVT_NOTIFY,           /* hyp_u32 (port), no reply: the daemon rings the peer's bell */
    HYP_EVT_UNMASK,           /* hyp_u32 (port), no reply; ignored (version 1's) */
    HYP_EVT_EVENT_UNUSED,     /* version 1's event message; never sent */
    HYP_BYE,                  /* empty, no reply: the handle is being closed, not lost */
    HYP_EVT_PEER,             /* hyp_u32 (port) -> hyp_port_reply [+ 1 fd: the peer's bell] */
};

struct hyp_u32 {
    uint32_t v;
};

struct hyp_hello {
    uint32_t version; /* HYP_PROTO_VERSION */
    uint32_t kind;    /* enum hyp_kind */
};

struct hyp_hello_reply {
    uint32_t domid; /* the domain this connection acts as */
};

#define HYP_MAP_WRITE 1u /* map writable (the mmap prot has PROT_WRITE) */

struct hyp_map_req {
    uint32_t count;         /* 1..HYP_MAP_MAX_REFS */
    uint32_t flags;         /* HYP_MAP_* */
    uint32_t notify_offset; /* byte in the mapping cleared on unmap; >= count pages: none */
    uint32_t notify_port;   /* local port notified on unmap, or HYP_NONE */
    /* followed by count struct hyp_map_ref */
};

struct hyp_map_ref {
    uint32_t domid;
    uint32_t ref;
};

struct hyp_map_reply {
    uint32_t map_id;
    uint32_t count; /* == request count */
    /* followed by count struct hyp_map_page; the fds come with the message */
};

struct hyp_map_page {
    uint32_t fd;   /* index into the message's fds */
    uint32_t page; /* page offset in that file */
};

struct hyp_obj_req {
    uint32_t domid; /* granting domain */
    uint32_t ref;
    uint32_t write; /* nonzero: the grant must be writable */
};

struct hyp_obj_reply {
    uint32_t obj;      /* object id */
    uint32_t npages;   /* size of the object (and of the fd) in pages */
    uint32_t writable; /* the fd is writable */
    uint32_t page;     /* page of ref within the object */
};

struct hyp_share_req {
    uint32_t domid; /* grantee */
    uint32_t count; /* pages in the memfd */
    uint32_t writable;
    uint32_t notify_offset; /* byte cleared when the share ends; >= count pages: none */
    uint32_t notify_port;   /* local port notified when the share ends, or HYP_NONE */
};

struct hyp_share_reply {
    uint32_t obj;
    /* followed by count uint32_t refs */
};

struct hyp_bind_req {
    uint32_t remote_dom;
    uint32_t remote_port;
};

struct hyp_port_reply {
    uint32_t port;
    uint32_t gen;  /* the port's generation count when the peer's bell (if any) was taken */
    uint32_t bell; /* 1: the peer's doorbell comes with the reply */
};

/* The grant table the daemon publishes per domain, read-only to clients:
 * HYP_NR_GRANTS entries; entry 0 (a reserved ref) holds the header. An entry
 * is written only by the daemon under a sequence count (odd while changing). */
#define HYP_GTAB_MAGIC 0x42415447u /* "GTAB" */

struct hyp_gtab_hdr {
    uint32_t magic;
    uint32_t domid;
    uint32_t dead; /* set when the domain is destroyed: drop this table */
    uint32_t nr;   /* entries */
};

#define HYP_GTE_VALID    1u
#define HYP_GTE_WRITABLE 2u

struct hyp_gtab_entry {
    uint32_t seq;
    uint16_t domid; /* grantee */
    uint16_t flags; /* HYP_GTE_* */
    uint32_t obj;   /* object id */
    uint32_t page;  /* page within the object */
};

_Static_assert(sizeof(struct hyp_gtab_hdr) == sizeof(struct hyp_gtab_entry), "header is entry 0");

#endif
