/* client.h - the connection every drop-in library handle has to xensim's
 * hypervisor (XENSIM_HYP=<dir>/dom<N>/hyp.sock), and error logging in the
 * manner of Xen's libraries. Protocol: ../proto/hyp_proto.h.
 */
#ifndef XSIM_LIB_CLIENT_H
#define XSIM_LIB_CLIENT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct xentoollog_logger;

struct xsim_client {
    int sock;
    uint32_t seq;
    uint32_t domid;       /* the domain this handle acts as */
    pthread_mutex_t lock; /* one request in flight per handle */
    struct xentoollog_logger *logger;
    const char *ctx; /* "gnttab", "gntshr", "evtchn" */
};

/* Connect and say HYP_HELLO for kind (passing evfd, if >= 0, for evtchn;
 * with rfd, the reply must carry one fd, stored there). cloexec false leaves
 * the socket open across exec. Returns 0, or -1 with errno (ENOENT: not
 * running under xensim, XENSIM_HYP unset). Logs errors. */
int xsim_client_open(struct xsim_client *c, uint32_t kind, int cloexec, int evfd, int *rfd,
                     struct xentoollog_logger *logger, const char *ctx);
void xsim_client_close(struct xsim_client *c);

/* One request and its reply. rep receives at most repmax bytes (its length in
 * *replen if replen); rfds at most *nrfds fds (the count on return). Returns
 * 0, or -1 with errno: the daemon's error, or EPROTO/ECONNRESET. */
int xsim_client_call(struct xsim_client *c, uint32_t op, const void *req, size_t reqlen,
                     const int *fds, unsigned nfds, void *rep, size_t repmax, size_t *replen,
                     int *rfds, unsigned *nrfds);
/* A request that gets no reply (HYP_EVT_NOTIFY, HYP_EVT_UNMASK). */
int xsim_client_post(struct xsim_client *c, uint32_t op, const void *req, size_t reqlen);

/* Log an error as Xen's libraries do: to logger, or to stderr if it is NULL
 * ("<ctx>: error: <message>: <strerror(errnoval)>"). Preserves errno. */
void xsim_client_log(struct xentoollog_logger *logger, const char *ctx, int errnoval,
                     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define XSIM_EXPORT __attribute__((visibility("default")))

#endif
