/* msg.h - framing of xensim's own sockets (hypervisor and control), not the
 * xenstore wire protocol. One message is one SOCK_SEQPACKET packet: a header,
 * a body of hdr.len bytes, and up to XSIM_MSG_MAX_FDS file descriptors passed
 * with SCM_RIGHTS. Both the daemon and the drop-in libraries use it.
 */
#ifndef XSIM_MSG_H
#define XSIM_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define XSIM_MSG_MAX     (256 * 1024) /* body bytes */
#define XSIM_MSG_MAX_FDS 253          /* SCM_MAX_FD on Linux */

struct xsim_hdr {
    uint32_t op;  /* request type; a reply carries the request's op */
    uint32_t seq; /* echoed in the reply */
    int32_t err;  /* reply: 0 or a positive errno */
    uint32_t len; /* body length */
};

/* Send one message. Returns 0, or -1 with errno. */
int xsim_send(int sock, const struct xsim_hdr *h, const void *body, const int *fds, unsigned nfds);

/* Receive one message into body (at most max bytes). Returns 1 on a message,
 * 0 on orderly EOF, -1 with errno on error (EPROTO: truncated or malformed;
 * any fds that came with a bad message are closed). *nfds is in/out: capacity
 * of fds on entry, number received on return; fds come with O_CLOEXEC. */
int xsim_recv(int sock, struct xsim_hdr *h, void *body, size_t max, int *fds, unsigned *nfds);

/* Ring an event-channel doorbell (hyp_proto.h): one datagram, never waiting.
 * A full doorbell already holds an event; a closed one's handle is gone. */
void xsim_ring_bell(int fd);

/* Connect a SOCK_SEQPACKET socket to path. Returns the fd or -1 with errno. */
int xsim_connect(const char *path);
/* Create, bind and listen on path (an existing socket file is replaced). */
int xsim_listen(const char *path);

#endif
