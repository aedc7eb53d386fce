/* sndin.c - load a recording, a WAV file or raw frames for sndcheck. */
#define _GNU_SOURCE
#include "sndin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "usck.h"
#include "wav.h"

static int read_all(const char *path, struct sndin *in, char *err, size_t errlen)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    size_t cap = 1 << 20;
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    in->buf = malloc(cap);
    in->len = 0;
    while (in->buf) {
        size_t n = fread(in->buf + in->len, 1, cap - in->len, f);
        in->len += n;
        if (in->len < cap)
            break;
        unsigned char *nb = realloc(in->buf, cap * 2);
        if (!nb) {
            free(in->buf);
            in->buf = NULL;
        } else {
            in->buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    if (f != stdin)
        fclose(f);
    if (!in->buf || bad) {
        snprintf(err, errlen, "%s: %s", path, in->buf ? "read error" : "out of memory");
        return -1;
    }
    return 0;
}

static struct sndin_stream *add_stream(struct sndin *in)
{
    struct sndin_stream *ns = realloc(in->streams, (in->nstreams + 1) * sizeof(*ns));
    if (!ns)
        return NULL;
    in->streams = ns;
    memset(&ns[in->nstreams], 0, sizeof(*ns));
    return &ns[in->nstreams++];
}

static struct sndin_chunk *add_chunk(struct sndin_stream *s)
{
    if (s->nchunks == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        struct sndin_chunk *nc = realloc(s->chunks, cap * sizeof(*nc));
        if (!nc)
            return NULL;
        s->chunks = nc;
        s->cap = cap;
    }
    memset(&s->chunks[s->nchunks], 0, sizeof(s->chunks[0]));
    return &s->chunks[s->nchunks++];
}

/* One stream, one chunk: frames from a WAV or raw file, timed by position. */
static int load_flat(struct sndin *in, enum snd_fmt fmt, unsigned channels, unsigned rate,
                     size_t off, size_t len, char *err, size_t errlen)
{
    struct sndin_stream *s = add_stream(in);
    struct sndin_chunk *c = s ? add_chunk(s) : NULL;
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->fmt = fmt, s->channels = channels, s->rate = rate;
    c->off = off;
    c->frames = (uint32_t)(len / sndin_frame_bytes(s));
    return 0;
}

static int load_usck(struct sndin *in, char *err, size_t errlen)
{
    struct sndin_stream *s = NULL;
    size_t off = 0;
    in->timed = 1;
    while (off < in->len) {
        struct usck_rec r;
        if (in->len - off < sizeof(r)) {
            in->truncated = in->len - off; /* a writer killed mid-record */
            break;
        }
        memcpy(&r, in->buf + off, sizeof(r));
        if (r.magic != USCK_MAGIC) {
            snprintf(err, errlen, "bad record at byte %zu (magic 0x%08x)", off, r.magic);
            return -1;
        }
        if (r.len > in->len - off - sizeof(r)) {
            in->truncated = in->len - off;
            break;
        }
        size_t data = off + sizeof(r);
        if (r.type == USCK_STREAM) {
            struct usck_stream st;
            if (r.len < sizeof(st)) {
                snprintf(err, errlen, "short stream record at byte %zu", off);
                return -1;
            }
            memcpy(&st, in->buf + data, sizeof(st));
            if (st.version != USCK_VERSION || st.format >= SND_FMT_COUNT || st.channels < 1 ||
                st.channels > 8 || st.rate == 0 || st.period_frames == 0) {
                snprintf(err, errlen,
                         "stream record at byte %zu: version %u, format %u, %u channels, %u Hz, "
                         "period %u: not one this sndcheck reads",
                         off, st.version, st.format, st.channels, st.rate, st.period_frames);
                return -1;
            }
            if (!(s = add_stream(in)))
                goto oom;
            s->fmt = st.format, s->channels = st.channels, s->rate = st.rate;
            s->period = st.period_frames, s->buffer = st.buffer_frames;
            s->capture = (int)st.capture, s->pid = st.pid;
            s->t_prepare_ns = r.t_ns;
        } else if (!s) {
            snprintf(err, errlen, "record at byte %zu before any stream record", off);
            return -1;
        } else if (r.type == USCK_PERIOD) {
            struct sndin_chunk *c;
            if ((uint64_t)r.frames * sndin_frame_bytes(s) != r.len || r.frames > s->period) {
                snprintf(err, errlen, "period record at byte %zu: %u frames in %u bytes", off,
                         r.frames, r.len);
                return -1;
            }
            if (!(c = add_chunk(s)))
                goto oom;
            c->off = data, c->frames = r.frames, c->fill = s->period - r.frames;
            c->pos = r.pos, c->t_ns = r.t_ns, c->t_seen_ns = r.t_seen_ns;
        } else if (r.type == USCK_EVENT) {
            s->xruns += r.arg == USCK_EV_XRUN;
            s->pauses += r.arg == USCK_EV_PAUSE;
        } /* unknown types are skipped: later versions may add some */
        off = data + r.len;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

int sndin_load(const char *path, const struct sndin_raw *raw, struct sndin *in, char *err,
               size_t errlen)
{
    memset(in, 0, sizeof(*in));
    if (read_all(path, in, err, errlen) < 0)
        return -1;
    int rc;
    if (in->len >= 4 && !memcmp(in->buf, "USCK", 4)) {
        rc = load_usck(in, err, errlen);
    } else if (in->len >= 4 && !memcmp(in->buf, "RIFF", 4)) {
        struct wav_info w;
        char why[200];
        rc = wav_parse(in->buf, in->len, &w, why, sizeof(why));
        if (rc < 0)
            snprintf(err, errlen, "%s: %s", path, why);
        else
            rc = load_flat(in, w.fmt, w.channels, w.rate, w.data_off, w.data_len, err, errlen);
    } else if (raw && raw->given) {
        rc = load_flat(in, raw->fmt, raw->channels, raw->rate, 0, in->len, err, errlen);
    } else {
        snprintf(err, errlen,
                 "%s: neither a recording nor WAV; for raw frames give --format, "
                 "--rate and --channels",
                 path);
        rc = -1;
    }
    if (rc == 0 && in->nstreams == 0) {
        snprintf(err, errlen, "%s: no stream in it", path);
        rc = -1;
    }
    if (rc < 0)
        sndin_free(in);
    return rc;
}

void sndin_free(struct sndin *in)
{
    if (!in)
        return;
    for (size_t i = 0; i < in->nstreams; i++)
        free(in->streams[i].chunks);
    free(in->streams);
    free(in->buf);
    memset(in, 0, sizeof(*in));
}
