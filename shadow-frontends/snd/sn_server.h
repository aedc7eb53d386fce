/* sn_server.h - the unix socket the guest's ALSA plugins talk to
 * (SOCK_SEQPACKET, the messages of sn_proto.h): one program per stream, any
 * number of mixers. It knows the card's streams and nothing of the
 * backend: each message becomes a call of sn_stream.h. Its fds are polled
 * by the owner's loop. */
#ifndef SN_SERVER_H
#define SN_SERVER_H

#include "sf_log.h"
#include "sn_stream.h"

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#define SN_MAX_CLIENTS 64u

struct sn_client {
    int fd;
    int role;       /* SNP_ROLE_*, 0 before HELLO */
    int stream;     /* PCM: the stream index, -1 none */
    unsigned pid;   /* as the client said, for the log */
    uint64_t drops; /* capture DATA it did not take in time */
};

struct sn_server {
    const char *path;
    struct sn_stream *st; /* the card's streams */
    unsigned nst;
    sf_log_sink *log;
    void *log_arg;
    int lfd; /* the listening socket */
    struct sn_client cl[SN_MAX_CLIENTS];
    unsigned ncl;
    uint8_t *msg; /* one message in (SNP_MAX_MSG) */
    uint8_t *out; /* one capture message out (SNP_MAX_MSG) */
};

/* Listen at path (its dir made if missing, a stale socket replaced). 0 or -1
 * (logged). */
int sn_server_open(struct sn_server *sv, const char *path, struct sn_stream *st, unsigned nst,
                   sf_log_sink *log, void *log_arg);
/* Every client closed (its stream detached), the socket removed. Safe on a
 * zeroed server whose lfd is -1. */
void sn_server_close(struct sn_server *sv);
/* pollfds for the listener and every client: how many were filled. */
unsigned sn_server_pollfds(const struct sn_server *sv, struct pollfd *p, unsigned max);
/* Act on what poll said of them (p as filled). */
void sn_server_events(struct sn_server *sv, const struct pollfd *p, unsigned n, uint64_t now);
/* Captured audio for the stream's program (an sn_host capture callback;
 * arg is the server). */
void sn_server_capture(void *arg, struct sn_stream *s, uint64_t pos, const uint8_t *data,
                       uint32_t frames);

#endif
