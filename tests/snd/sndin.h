/* sndin.h - load what sndcheck reads: a clocked-PCM recording (usck.h), a WAV
 * file or raw frames, as streams of timed chunks of frames. */
#ifndef SND_SNDIN_H
#define SND_SNDIN_H

#include <stddef.h>
#include <stdint.h>

#include "framecode.h"

struct sndin_chunk {
    size_t off;         /* byte offset of its frames in the loaded file */
    uint32_t frames;    /* frames of data */
    uint32_t fill;      /* frames the clock ran with no data (an underrun) */
    uint64_t pos;       /* stream-clock position of its first frame */
    uint64_t t_ns;      /* when its first frame played (stream clock, CLOCK_MONOTONIC) */
    uint64_t t_seen_ns; /* when the plugin processed it */
};

struct sndin_stream {
    enum snd_fmt fmt;
    unsigned channels, rate, period, buffer;
    int capture;
    unsigned pid;
    uint64_t t_prepare_ns;
    unsigned xruns, pauses;
    struct sndin_chunk *chunks;
    size_t nchunks, cap;
};

struct sndin {
    unsigned char *buf;
    size_t len;
    int timed;        /* a clocked-PCM recording; else times come from frame positions */
    size_t truncated; /* bytes of a last record cut short (its writer died), skipped */
    struct sndin_stream *streams;
    size_t nstreams;
};

/* How to read a file that is neither a recording nor WAV. */
struct sndin_raw {
    int given;
    enum snd_fmt fmt;
    unsigned channels, rate;
};

/* Loads path; 0, or -1 with a reason in err. */
int sndin_load(const char *path, const struct sndin_raw *raw, struct sndin *in, char *err,
               size_t errlen);
void sndin_free(struct sndin *in);

static inline unsigned sndin_frame_bytes(const struct sndin_stream *s)
{
    return snd_fmt_bytes(s->fmt) * s->channels;
}

#endif
