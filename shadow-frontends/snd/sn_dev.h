/* sn_dev.h - the shadow sndfront: one virtual sound card (device/vsnd/<id>),
 * its streams, and its connections, as a class of the core's connection
 * driver (sf_conn.h: the handshake, detection and the recovery sequence are
 * the core's). What is the card's own: the card read from the frontend dir,
 * one sndif transport per stream, the programs' plugins on a unix socket
 * (sn_server.c), each stream's shadow and its reopening on a new backend
 * (sn_stream.c), and the audio gap of each recovery. Single-threaded:
 * sn_dev_run owns one poll loop.
 */
#ifndef SN_DEV_H
#define SN_DEV_H

#include "sf_conn.h"
#include "sn_stream.h"
#include "snd_card.h"

#include <stdbool.h>
#include <stdint.h>

#define SN_MAX_CLIENTS 64u

struct sn_config {
    const char *device;   /* the frontend dir, e.g. device/vsnd/0 */
    const char *socket;   /* the plugins' socket */
    unsigned deadline_ms; /* a request unanswered this long: the backend hangs */
    bool shadow;          /* off: restart only (streams are not reopened) */
    bool verbose;
};

struct sn_client {
    int fd;
    int role;       /* SNP_ROLE_*, 0 before HELLO */
    int stream;     /* PCM: the stream index, -1 none */
    unsigned pid;   /* as the client said, for the log */
    uint64_t drops; /* capture DATA it did not take in time */
};

struct sn_dev {
    struct sn_config cfg;
    struct sfc c; /* the connection driver: handshake, watches, recovery */
    xengntshr_handle *gs;
    xenevtchn_handle *xce;
    struct sndc_card card;
    struct sn_host host;
    struct sn_stream st[SNDC_MAX_STREAMS];
    unsigned nst;

    int lfd; /* the listening socket */
    struct sn_client cl[SN_MAX_CLIENTS];
    unsigned ncl;
    uint8_t *msg; /* one message in (SNP_MAX_MSG) */
    uint8_t *out; /* one capture message out (SNP_MAX_MSG) */
    bool stop;
};

/* Open xenstore, Xen handles, the card and the socket. 0 or -1 (logged). */
int sn_dev_open(struct sn_dev *d, const struct sn_config *cfg);
/* The loop, until SIGTERM/SIGINT on sigfd. */
int sn_dev_run(struct sn_dev *d, int sigfd);
void sn_dev_close(struct sn_dev *d);

void sn_log(const struct sn_dev *d, bool verbose_only, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* sn_server.c: the programs' socket. */
int sn_server_open(struct sn_dev *d);
void sn_server_close(struct sn_dev *d);
/* pollfds for the listener and every client: how many were filled. */
unsigned sn_server_pollfds(const struct sn_dev *d, struct pollfd *p, unsigned max);
/* Act on what poll said of them (p as filled). */
void sn_server_events(struct sn_dev *d, const struct pollfd *p, unsigned n, uint64_t now);
/* Captured audio for the stream's program (sn_host.capture). */
void sn_server_capture(void *arg, struct sn_stream *s, uint64_t pos, const uint8_t *data,
                       uint32_t frames);

#endif
