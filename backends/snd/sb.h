/* sb.h - sndback, the sndif class (xen/io/sndif.h) over the backend core:
 * one process per virtual sound card, each stream of the card its own
 * request ring, event page and ALSA PCM. Design: backends/README.md.
 */
#ifndef SB_H
#define SB_H

#include "be.h"
#include "snd_alsa.h"
#include "snd_card.h"

#include <alsa/asoundlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <xen/io/sndif.h>

#define SB_PAGE_SIZE 4096u

/* The stream's ALSA side (sb_pcm.c). */
struct sb_pcm {
    snd_pcm_t *h;
    int epfd;     /* an epoll set of the PCM's poll descriptors, in the core's loop */
    bool watched; /* the PCM's descriptors are in epfd */
    bool in_loop; /* epfd is in the core's loop */
    uint64_t timer;
    snd_pcm_uframes_t period_frames, buffer_frames;
    bool can_pause;
    bool need_start; /* started (or underrun) with nothing queued: start once data is */

    /* Octets between the frontend and the PCM: playback, written by WRITE
     * and taken by the PCM; capture, filled from the PCM and taken by READ. */
    uint8_t *fifo;
    size_t fifo_size, fifo_head, fifo_len;
    uint8_t *stage; /* one period, where volume and mute are applied */

    uint64_t frames_io; /* frames written to (read from) the PCM since OPEN */
    uint64_t pos_bytes; /* the position last reported */
    uint64_t next_evt;  /* the next period boundary to report, octets */
};

enum sb_run { SB_STOPPED, SB_RUNNING, SB_PAUSED };

struct sb_dev;

struct sb_stream {
    struct sb_dev *d;
    unsigned pcm_idx, idx;
    char dir[160]; /* the frontend's stream dir */
    char unique_id[SNDC_UNIQUE_ID_MAX];
    char pcm_name[128]; /* from a unique-id "alsa:<pcm>[#<tag>]"; empty: the default */
    bool capture;
    struct sndc_params p; /* effective: inherited and narrowed */

    /* The connection. */
    struct be_ring ring, evt;
    xen_sndif_back_ring_t br;
    bool attached, broken, push;
    uint16_t evt_id; /* the next event's id: 0, 1, 2, ... from OPEN */
    /* HW_PARAM_QUERY lines logged in this minute: a negotiation is tens of
     * queries, and the one that fails is what to read - a budget of its own
     * keeps it whole where a per-second limit would cut it. */
    uint64_t qlog_window_ms;
    unsigned qlog_n;

    /* An open stream (OPEN .. CLOSE). */
    bool open;
    enum sb_run run;
    uint32_t rate, buffer_sz, period_sz;
    uint8_t format, channels;
    unsigned frame_bytes;
    snd_pcm_format_t afmt;
    uint8_t *buf; /* the shared buffer, buffer_sz octets (mapped pages) */
    unsigned buf_pages;
    int32_t vol[SNDC_MAX_CHANNELS]; /* 0.001 dB */
    bool mute[SNDC_MAX_CHANNELS];
    struct sb_pcm pcm;
};

struct sb_dev {
    struct be_dev *be;
    const char *default_pcm; /* --pcm, or the backend's "pcm" key; NULL: "default" */
    char short_name[33], long_name[81];
    unsigned version; /* the frontend's, 1 or 2 */
    unsigned nr_streams;
    struct sb_stream st[SNDC_MAX_STREAMS];
};

/* sb_config.c */
int sb_config_read(struct sb_dev *d);
/* sb_publish.c */
int sb_publish(struct be_dev *be, xs_transaction_t t);
/* sb_connect.c */
int sb_connect(struct be_dev *be);
void sb_disconnect(struct be_dev *be);
/* sb_ring.c */
void sb_ring_event(struct be_dev *be, struct be_ring *r, void *opaque);
void sb_respond(struct sb_stream *s, const struct xensnd_req *req, int status,
                const struct xensnd_query_hw_param *hw);
void sb_push(struct sb_stream *s);
/* sb_dispatch.c */
void sb_dispatch(struct sb_stream *s, const struct xensnd_req *req);
/* sb_open.c: OPEN and CLOSE */
int sb_open(struct sb_stream *s, const struct xensnd_open_req *o);
void sb_close(struct sb_stream *s);
/* sb_query.c */
int sb_query(struct sb_stream *s, const struct xensnd_query_hw_param *in,
             struct xensnd_query_hw_param *out);
/* sb_pcm.c */
int sb_pcm_open(struct sb_stream *s);
void sb_pcm_close(struct sb_stream *s);
int sb_pcm_trigger(struct sb_stream *s, unsigned type);
void sb_pcm_kick(struct sb_stream *s); /* data arrived (playback): move it */
const char *sb_pcm_name(const struct sb_stream *s);
/* sb_fifo.c */
size_t sb_fifo_put(struct sb_pcm *p, const uint8_t *src, size_t n);
size_t sb_fifo_get(struct sb_pcm *p, uint8_t *dst, size_t n);
size_t sb_fifo_peek(const struct sb_pcm *p, uint8_t *dst, size_t n);
void sb_fifo_drop(struct sb_pcm *p, size_t n);
/* sb_volume.c: software volume and mute over interleaved frames. */
bool sb_volume_supported(snd_pcm_format_t f);
void sb_volume_apply(const struct sb_stream *s, uint8_t *frames, size_t nframes);
/* sb_evt.c */
void sb_evt_position(struct sb_stream *s, uint64_t pos);
/* sb_corrupt.c */
bool sb_corrupt(struct be_dev *be, struct be_ring *r, RING_IDX idx, enum be_corrupt how);

#endif
