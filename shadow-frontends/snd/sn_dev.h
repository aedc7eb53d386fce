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
#include "sn_server.h"
#include "sn_stream.h"
#include "snd_card.h"

#include <stdbool.h>
#include <stdint.h>

struct sn_config {
    const char *device;   /* the frontend dir, e.g. device/vsnd/0 */
    const char *socket;   /* the plugins' socket */
    unsigned deadline_ms; /* a request unanswered this long: the backend hangs */
    bool shadow;          /* off: restart only (streams are not reopened) */
    bool verbose;
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

    struct sn_server srv; /* the programs' socket */
    bool stop;
};

/* Open xenstore, Xen handles, the card and the socket. 0 or -1 (logged). */
int sn_dev_open(struct sn_dev *d, const struct sn_config *cfg);
/* The loop, until SIGTERM/SIGINT on sigfd. */
int sn_dev_run(struct sn_dev *d, int sigfd);
void sn_dev_close(struct sn_dev *d);

void sn_log(const struct sn_dev *d, bool verbose_only, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
