/* sn_stream.h - one stream of the shadow sndfront: what the guest's program
 * set (its shadow: hw params, the run state and the stream clock, volume
 * and mute, the audio written ahead of the clock) and how that is carried to
 * whichever backend is connected (OPEN, WRITE/READ through the shared
 * buffer, TRIGGER, SET_VOLUME/MUTE, the CUR_POS events).
 *
 * Sound is real time: nothing is held for a missing backend. The stream's
 * clock runs in the program's plugin; the daemon keeps the same clock from
 * what START and PAUSE said, so that on a new backend it reopens the stream
 * with the recorded parameters, restores volume and mute, and starts it at
 * the position the program is at *now*: audio that fell in the outage is
 * dropped, and the gap is how much (in the new backend's positions, which
 * start again at 0 at OPEN, rebased onto the stream's).
 *
 * Single-threaded: the owner (sn_dev.c) calls in from its loop.
 */
#ifndef SN_STREAM_H
#define SN_STREAM_H

#include "sn_proto.h"
#include "sn_ring.h"
#include "snd_card.h"

#include <stdbool.h>
#include <stdint.h>

enum sn_run {
    SN_IDLE = 0, /* no parameters, or not prepared */
    SN_PREPARED, /* prepared, its clock not started */
    SN_RUNNING,
    SN_PAUSED,
    SN_DRAINING, /* the program drained: the backend plays out what it has */
};

/* A request's tag: the operation, and for READ and WRITE where in the
 * buffer (sn_stream.c, sn_standby.c). */
#define SN_TAG(op, off, len) ((uint64_t)(op) | (uint64_t)(off) << 8 | (uint64_t)(len) << 36)
#define SN_TAG_OP(t)         ((unsigned)((t)&0xffu))
#define SN_TAG_OFF(t)        ((uint32_t)(((t) >> 8) & 0xfffffffu))
#define SN_TAG_LEN(t)        ((uint32_t)((t) >> 36))

enum sn_be {
    SN_BE_CLOSED = 0,
    SN_BE_OPENING, /* OPEN issued */
    SN_BE_OPEN,
    SN_BE_CLOSING, /* CLOSE issued: nothing else until it is answered */
};

struct sn_stream;

/* What a stream needs of its owner. */
struct sn_host {
    void *arg;
    /* A line for the log (no newline). */
    void (*log)(void *arg, const struct sn_stream *s, bool error, const char *msg);
    /* Captured frames for the stream's program, from stream position pos. */
    void (*capture)(void *capture_arg, struct sn_stream *s, uint64_t pos, const uint8_t *data,
                    uint32_t frames);
    void *capture_arg;
};

struct sn_stream {
    const struct sn_host *host;
    unsigned index;
    struct sndc_stream cfg; /* as the card says */
    bool shadow;            /* off: a restarted backend gets nothing back (restart only) */

    /* The transport to the backend now connected (none while down). */
    struct sn_ring r;
    bool up;
    /* The failed transport at a hot switch (sn_stream_retire): still shared
     * and bound, never used again, released once the stream is moving on
     * the standby (sn_stream_release). */
    struct sn_ring retired;
    /* A hot standby's transport, set up and idle until promoted (sn_dev.c),
     * with the stream OPENed on it ahead (sn_standby.c): the program's
     * parameters, a buffer shared, nothing written, never started. */
    struct sn_ring sb;
    enum sn_be sb_be;
    struct snp_hw_params sb_hw; /* what the standby's OPEN carried */
    bool sb_refused;            /* the standby refused sb_hw: not again until they change */
    bool carried;               /* promoted with that OPEN done or in flight: none to issue */
    enum sn_be be;
    bool be_started; /* TRIGGER START sent since the OPEN */
    bool be_paused;
    bool be_dirty;           /* started since the OPEN: the next PREPARE opens it afresh */
    bool open_wanted;        /* OPEN as soon as the CLOSE in flight is answered */
    uint32_t data_sz;        /* octets of the shared buffer that carry audio */
    uint32_t ctl_off;        /* where volume and mute values go */
    uint32_t woff, inflight; /* the next offset in the data part, octets in flight */
    uint64_t base;           /* the stream position of the backend's octet 0 */
    uint64_t sent;           /* playback: sent up to; capture: asked for up to */
    uint64_t rd_pos;         /* capture: the position of the next READ answered */
    uint64_t bepos;          /* frames the backend reported (from base) */
    uint64_t evt_ms;         /* when it last reported (or was started) */
    uint64_t drain_until;    /* DRAINING: stop by then whatever it reports */

    /* The program's side: its connection and what it set. */
    void *client;
    bool have_params;
    struct snp_hw_params hw;
    unsigned fb; /* octets a frame */
    enum sn_run run;
    uint64_t t0_ns, pos0; /* RUNNING: position pos0 fell at t0_ns */
    uint64_t pause_pos;
    uint64_t appl; /* playback: frames the program has written */
    uint8_t *win;  /* playback: the last win_frames frames written, by position */
    uint32_t win_frames;
    int32_t vol[SNP_MAX_CHANNELS];
    uint8_t mute[SNP_MAX_CHANNELS];
    bool vol_set, mute_set; /* the program set them: given to every backend */

    /* The recovery in progress. */
    bool lost;           /* it was live on the backend that failed (until reopened) */
    uint64_t played_at;  /* stream position the failed backend reported played */
    uint64_t played_max; /* ... and may have played by the time it was found dead */
    bool restoring;      /* reopened on the new backend, not yet answered */
    uint64_t gap_frames; /* of the last recovery: from its last report to the restart,
                            so at most one period more than was heard missing */
    bool gap_known;
    /* The failed backend's last report (ms), kept through a prepare: a
     * program that underran and prepared its stream again during the
     * recovery (a guest starved of CPU) still had the gap, in time. */
    uint64_t lost_evt_ms;
    bool lost_wall;
    /* Audio lost and none heard since: a backend that fails again before it
     * reports a frame played (a crash during recovery) continues the gap
     * from the first loss, not from its own start. */
    bool gap_open;
    uint64_t write_errors, read_errors, late_drops;
};

/* A line for the host's log about s (sn_stream.c, sn_standby.c). */
void sn_stream_log(const struct sn_stream *s, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void sn_stream_init(struct sn_stream *s, const struct sn_host *host, unsigned index,
                    const struct sndc_stream *cfg, bool shadow);
void sn_stream_free(struct sn_stream *s);

/* The card's settings for the program (CAPS). */
void sn_stream_caps(const struct sn_stream *s, struct snp_caps *c);

/* ---- from the program ---- */
/* 0 or -errno. */
int sn_stream_hw_params(struct sn_stream *s, const struct snp_hw_params *hw, uint64_t now);
int sn_stream_prepare(struct sn_stream *s, uint64_t now);
void sn_stream_start(struct sn_stream *s, const struct snp_clock *c, uint64_t now);
void sn_stream_stop(struct sn_stream *s, const struct snp_stop *st, uint64_t now);
void sn_stream_pause(struct sn_stream *s, const struct snp_pause *p, uint64_t now);
void sn_stream_data(struct sn_stream *s, uint64_t pos, const uint8_t *frames, uint32_t n,
                    uint64_t now);
/* Volume (0.001 dB) and mute of channels 0..n-1; 0 or -errno. */
int sn_stream_set_volume(struct sn_stream *s, const int32_t *vol, const uint8_t *mute, unsigned n,
                         uint64_t now);
/* A drain played out, or cut short (another program takes the stream):
 * stop the backend; closed if no program has the stream. */
void sn_stream_end_drain(struct sn_stream *s, uint64_t now);
/* The program went away: play out a drain, then close. */
void sn_stream_detach(struct sn_stream *s, uint64_t now);

/* ---- the backend ---- */
/* A transport for domid (setup of the connection). 0 or -1 (errno). */
int sn_stream_setup(struct sn_stream *s, xengntshr_handle *gs, xenevtchn_handle *xce,
                    uint32_t domid);
/* The hot standby's transport (sn_standby.c): shared with domid and held,
 * dropped, or made the live one (after sn_stream_teardown of the failed
 * one; then sn_stream_connected starts the stream on it, or reopens it if
 * it was not open there ahead). */
int sn_stream_standby_setup(struct sn_stream *s, xengntshr_handle *gs, xenevtchn_handle *xce,
                            uint32_t domid);
void sn_stream_standby_teardown(struct sn_stream *s);
void sn_stream_promote(struct sn_stream *s, uint64_t now);
/* While the standby is held: take its answers, open or close the stream on
 * it as the program's parameters say. 0, or -1 with why (the standby
 * misbehaved: an answer or an event it cannot send, an overdue answer). */
int sn_stream_standby_service(struct sn_stream *s, uint64_t now, unsigned deadline_ms, char *why,
                              size_t len);
/* ... and ms until its oldest request would be overdue, at most cap. */
unsigned sn_stream_standby_timeout(const struct sn_stream *s, uint64_t now, unsigned deadline_ms,
                                   unsigned cap);
/* OPEN for the stream's parameters, its buffer shared on r (the live OPEN's
 * and the standby's); its data size in *data_sz. 0, or -1 (errno). */
int sn_stream_open_req(const struct sn_stream *s, struct sn_ring *r, struct xensnd_req *q,
                       uint32_t *data_sz);
/* The program's parameters are those the standby's OPEN carried. */
bool sn_stream_same_hw(const struct snp_hw_params *a, const struct snp_hw_params *b);
/* The backend is connected: reopen and restore what the program had. */
void sn_stream_connected(struct sn_stream *s, uint64_t now);
/* The backend failed: note how far it played (before the transport goes). */
void sn_stream_lost(struct sn_stream *s, uint64_t now);
void sn_stream_teardown(struct sn_stream *s);
/* As sn_stream_teardown, but the transport's unbinding and unsharing (a
 * call to the hypervisor each) wait for sn_stream_release: a hot switch
 * starts the stream on the standby first. */
void sn_stream_retire(struct sn_stream *s);
void sn_stream_release(struct sn_stream *s);
/* Take responses and events; move audio. 1 if the backend answered or
 * reported anything, 0 if not, -1 with why (the backend misbehaved: the
 * caller starts a recovery). */
int sn_stream_service(struct sn_stream *s, uint64_t now, char *why, size_t len);
/* The backend hangs: true with why if a request is overdue past deadline_ms
 * or the position stopped while the backend had audio to play. */
bool sn_stream_stalled(const struct sn_stream *s, uint64_t now, unsigned deadline_ms, char *why,
                       size_t len);
/* The oldest request the backend has not answered. */
bool sn_stream_oldest(const struct sn_stream *s, uint64_t *since);
/* Restored on the new backend (its OPEN answered), or nothing to restore. */
bool sn_stream_restored(const struct sn_stream *s);
/* The stream's clock position now (frames). */
uint64_t sn_stream_clock(const struct sn_stream *s, uint64_t now_ns);
/* ms until the stream next needs a turn without any event (a drain's end,
 * the moment its position would be overdue), at most cap. */
unsigned sn_stream_timeout(const struct sn_stream *s, uint64_t now, unsigned deadline_ms,
                           unsigned cap);

#endif
