/* sb_volume.c - software volume and mute. sndif names no mixer control, so
 * the backend scales the samples itself, per channel: 0.001 dB steps, gain
 * 10^(dB/20), saturating. 0 dB leaves a sample untouched (bit-exact), a
 * muted channel is the format's silence.
 */
#define _GNU_SOURCE
#include "sb.h"

#include <math.h>
#include <string.h>

bool sb_volume_supported(snd_pcm_format_t f)
{
    return f == SND_PCM_FORMAT_S16_LE || f == SND_PCM_FORMAT_S24_LE || f == SND_PCM_FORMAT_S32_LE ||
           f == SND_PCM_FORMAT_FLOAT_LE;
}

static int64_t clamp(double v, int64_t lo, int64_t hi)
{
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)lrint(v);
}

static void scale(snd_pcm_format_t f, uint8_t *p, double g)
{
    if (f == SND_PCM_FORMAT_S16_LE) {
        int16_t v;
        memcpy(&v, p, 2);
        v = (int16_t)clamp(v * g, INT16_MIN, INT16_MAX);
        memcpy(p, &v, 2);
    } else if (f == SND_PCM_FORMAT_S24_LE) {
        int32_t v;
        memcpy(&v, p, 4);
        v = (int32_t)((uint32_t)v << 8) >> 8; /* sign-extend the low 24 bits */
        v = (int32_t)clamp(v * g, -8388608, 8388607);
        v &= 0xffffff;
        memcpy(p, &v, 4);
    } else if (f == SND_PCM_FORMAT_S32_LE) {
        int32_t v;
        memcpy(&v, p, 4);
        v = (int32_t)clamp(v * g, INT32_MIN, INT32_MAX);
        memcpy(p, &v, 4);
    } else if (f == SND_PCM_FORMAT_FLOAT_LE) {
        float v;
        memcpy(&v, p, 4);
        v = (float)(v * g);
        memcpy(p, &v, 4);
    }
}

void sb_volume_apply(const struct sb_stream *s, uint8_t *frames, size_t nframes)
{
    unsigned sbytes = s->frame_bytes / s->channels;
    for (unsigned c = 0; c < s->channels; c++) {
        if (!s->mute[c] && !s->vol[c])
            continue; /* 0 dB: untouched */
        double g = s->mute[c] ? 0 : pow(10.0, s->vol[c] / 20000.0);
        for (size_t i = 0; i < nframes; i++) {
            uint8_t *p = frames + i * s->frame_bytes + c * sbytes;
            if (s->mute[c])
                snd_pcm_format_set_silence(s->afmt, p, 1);
            else
                scale(s->afmt, p, g);
        }
    }
}
