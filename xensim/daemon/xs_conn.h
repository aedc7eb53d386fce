/* xs_conn.h - one client connection: framing of the xenstore wire protocol
 * (xen/io/xs_wire.h) on a unix stream socket, dispatch of requests, and a
 * bounded output queue.
 *
 * Output bound (xenstored's approach): a connection is not read while 20
 * replies to it are unsent (quota_req_outstanding; here for every
 * connection), and watch events are dropped, never the connection, when
 * its queue would pass XS_OUT_MAX bytes, when an identical event is still
 * queued, or (unprivileged domains) when an event has waited 20 s unsent.
 */
#ifndef XSIM_XS_CONN_H
#define XSIM_XS_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <errno.h> /* before xs_wire.h, for xsd_errors */
#include <stdint.h>
#include <xen/io/xs_wire.h>

#include "xs_store.h"

struct evloop;
struct xs_watch;
struct xs_tx;
struct xs_out;

#define XS_OUTSTANDING_MAX  20              /* quota_req_outstanding */
#define XS_OUT_MAX          (2560u * 1024u) /* quota_memory_per_domain_hard */
#define XS_EVENT_TIMEOUT_MS 20000u          /* timeout_watch_event_msec */
/* Connections an unprivileged domain may hold. On Xen a domU has one (its
 * ring: the kernel multiplexes its processes over it); here each process
 * connects, so without a limit a domain multiplies the per-connection
 * quotas (transactions, outstanding requests, output memory) at will. */
#define XS_CONNS_PER_DOMAIN 256u

struct xs_conn {
    int fd;
    struct xs_who who; /* domid; tx of the request being processed */
    bool closed;
    /* input: a header, then its payload */
    struct xsd_sockmsg in_hdr;
    unsigned in_used; /* bytes of header or payload read */
    bool in_body;
    char in_buf[XENSTORE_PAYLOAD_MAX + 1];
    /* output */
    struct xs_out *out_head, *out_tail;
    size_t out_bytes;
    unsigned out_replies;
    uint32_t events_mask; /* what the loop watches */
    /* state */
    struct xs_watch *watches;
    struct xs_tx *txs;
    unsigned ntxs;
    uint32_t next_tx_id;
    struct xs_conn *next;
};

/* A request being processed. */
struct xs_req {
    struct xsd_sockmsg hdr;
    const char *body; /* hdr.len bytes, followed by a NUL the client did not send */
    unsigned len;
};

void xs_conn_init(struct evloop *l);
/* Close every connection. */
void xs_conn_fini(void);

/* Serve a connected socket as domid. Returns 0 or -1 (fd is closed). */
int xs_conn_new(int fd, unsigned domid);
/* Close the connection: its watches and transactions go with it. */
void xs_conn_close(struct xs_conn *c);
/* Close every connection of domid. */
void xs_conn_close_domain(unsigned domid);
/* The first connection, for iterating with ->next. */
struct xs_conn *xs_conn_list(void);

/* Replies to r. A payload above XENSTORE_PAYLOAD_MAX becomes E2BIG. */
void xs_reply(struct xs_conn *c, const struct xs_req *r, const void *data, size_t len);
void xs_reply_ok(struct xs_conn *c, const struct xs_req *r);
void xs_reply_error(struct xs_conn *c, const struct xs_req *r, int err);
/* Queue a watch event (may be dropped as above). */
void xs_conn_event(struct xs_conn *c, const char *path, const char *token);

/* Payload helpers, with xenstored's rules. */
/* The payload if it is exactly one string (its only NUL at the end), else NULL. */
const char *xs_req_onearg(const struct xs_req *r);
/* Number of NULs in the payload. */
unsigned xs_req_count(const struct xs_req *r);
/* get_strings(): fill up to n starts of NUL-terminated strings; returns how many there are. */
unsigned xs_req_strings(const struct xs_req *r, const char **vec, unsigned n);

#endif
