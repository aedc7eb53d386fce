/* usck.h - the recording the clocked test PCM (usclock) writes, and sndcheck reads.
 *
 * A file is a sequence of records, each a 48-byte header in host byte order
 * (little-endian here) followed by `len` bytes of payload. Each time a stream
 * is prepared the plugin appends a STREAM record, then, while it runs, one
 * PERIOD record per period the clock consumed (playback) or produced
 * (capture), and EVENT records for start, stop, pause, resume and xrun. Files
 * are opened for append, so several streams (a sink reopened after a restart)
 * follow one another in one file; CLOCK_MONOTONIC is system-wide, so their
 * times compare.
 *
 *   STREAM  payload: struct usck_stream. pos 0.
 *   PERIOD  payload: `frames` interleaved frames in the stream's format. pos is
 *           the stream-clock position (frames since start, pauses excluded) of
 *           the period's first frame; t_ns the CLOCK_MONOTONIC time the clock
 *           says that frame played (start + pos / rate, pauses excluded);
 *           t_seen_ns when the plugin actually processed the tick. A period
 *           shorter than the stream's period_frames is an underrun: the clock
 *           ran for period_frames but only `frames` were there to play.
 *   EVENT   no payload; `arg` is an enum usck_event.
 */
#ifndef SND_USCK_H
#define SND_USCK_H

#include <stdint.h>

#define USCK_MAGIC   0x4b435355u /* "USCK" */
#define USCK_VERSION 1

enum usck_type { USCK_STREAM = 1, USCK_PERIOD = 2, USCK_EVENT = 3 };
enum usck_event { USCK_EV_START = 1, USCK_EV_STOP, USCK_EV_PAUSE, USCK_EV_RESUME, USCK_EV_XRUN };

struct usck_rec {
    uint32_t magic;
    uint16_t type;
    uint16_t arg;
    uint32_t len;    /* payload bytes */
    uint32_t frames; /* PERIOD: frames in the payload */
    uint64_t pos;
    uint64_t t_ns;
    uint64_t t_seen_ns;
    uint64_t reserved;
};

struct usck_stream {
    uint32_t version; /* USCK_VERSION */
    uint32_t capture; /* 0 playback, 1 capture */
    uint32_t format;  /* enum snd_fmt */
    uint32_t channels;
    uint32_t rate;
    uint32_t period_frames;
    uint32_t buffer_frames;
    uint32_t pid; /* the process that played */
};

_Static_assert(sizeof(struct usck_rec) == 48, "usck_rec is 48 bytes on disk");
_Static_assert(sizeof(struct usck_stream) == 32, "usck_stream is 32 bytes on disk");

#endif
