/* sb_query.c - HW_PARAM_QUERY: each range the frontend sends narrowed to
 * what the stream advertises and to what its PCM accepts (the PCM is
 * opened for the question when the stream is not open; an open stream
 * answers with its own configuration).
 */
#define _GNU_SOURCE
#include "sb.h"

#include <xen/errno.h>

#include <string.h>

static bool narrow(uint32_t *lo, uint32_t *hi, uint32_t min, uint32_t max)
{
    if (*lo < min)
        *lo = min;
    if (*hi > max)
        *hi = max;
    return *lo <= *hi;
}

/* Ask the PCM: narrow q to what it takes. -XEN_E* if nothing is left. */
static int ask_pcm(struct sb_stream *s, struct xensnd_query_hw_param *q)
{
    snd_pcm_t *h;
    int e = snd_pcm_open(&h, sb_pcm_name(s),
                         s->capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK,
                         SND_PCM_NONBLOCK);
    if (e < 0) {
        BE_LOG_RL(s->d->be, "stream %u/%u: HW_PARAM_QUERY: opening PCM %s: %s", s->pcm_idx, s->idx,
                  sb_pcm_name(s), snd_strerror(e));
        return -XEN_EIO;
    }
    snd_pcm_hw_params_t *hw;
    snd_pcm_format_mask_t *fm;
    snd_pcm_hw_params_alloca(&hw);
    snd_pcm_format_mask_alloca(&fm);
    snd_pcm_format_mask_none(fm);
    for (unsigned f = 0; f < SNDC_NR_FORMATS; f++)
        if (q->formats & (1ull << f))
            snd_pcm_format_mask_set(fm, sndc_format_alsa(f));
    unsigned rmin = q->rates.min, rmax = q->rates.max, cmin = q->channels.min,
             cmax = q->channels.max;
    snd_pcm_uframes_t bmin = q->buffer.min, bmax = q->buffer.max, pmin = q->period.min,
                      pmax = q->period.max;
    int st = 0;
    if (snd_pcm_hw_params_any(h, hw) < 0 ||
        snd_pcm_hw_params_set_access(h, hw, SND_PCM_ACCESS_RW_INTERLEAVED) < 0 ||
        snd_pcm_hw_params_set_format_mask(h, hw, fm) < 0 ||
        snd_pcm_hw_params_set_rate_minmax(h, hw, &rmin, NULL, &rmax, NULL) < 0 ||
        snd_pcm_hw_params_set_channels_minmax(h, hw, &cmin, &cmax) < 0 ||
        snd_pcm_hw_params_set_buffer_size_minmax(h, hw, &bmin, &bmax) < 0 ||
        snd_pcm_hw_params_set_period_size_minmax(h, hw, &pmin, NULL, &pmax, NULL) < 0) {
        st = -XEN_EINVAL;
    } else {
        uint64_t m = 0;
        for (unsigned f = 0; f < SNDC_NR_FORMATS; f++)
            if ((q->formats & (1ull << f)) &&
                snd_pcm_hw_params_test_format(h, hw, sndc_format_alsa(f)) == 0)
                m |= 1ull << f;
        snd_pcm_hw_params_get_rate_min(hw, &rmin, NULL);
        snd_pcm_hw_params_get_rate_max(hw, &rmax, NULL);
        snd_pcm_hw_params_get_channels_min(hw, &cmin);
        snd_pcm_hw_params_get_channels_max(hw, &cmax);
        snd_pcm_hw_params_get_buffer_size_min(hw, &bmin);
        snd_pcm_hw_params_get_buffer_size_max(hw, &bmax);
        snd_pcm_hw_params_get_period_size_min(hw, &pmin, NULL);
        snd_pcm_hw_params_get_period_size_max(hw, &pmax, NULL);
        q->formats = m;
        /* ALSA's answer only narrows further: clamp to what we asked. */
        narrow(&q->rates.min, &q->rates.max, rmin, rmax);
        narrow(&q->channels.min, &q->channels.max, cmin, cmax);
        narrow(&q->buffer.min, &q->buffer.max, (uint32_t)bmin,
               bmax > UINT32_MAX ? UINT32_MAX : (uint32_t)bmax);
        narrow(&q->period.min, &q->period.max, (uint32_t)pmin,
               pmax > UINT32_MAX ? UINT32_MAX : (uint32_t)pmax);
        if (!m)
            st = -XEN_EINVAL;
    }
    snd_pcm_close(h);
    return st;
}

/* The largest buffer in frames that buffer-size holds for q: over the
 * smallest frame q still allows. 0 when q allows no format. */
static uint32_t max_buffer_frames(const struct sndc_params *p,
                                  const struct xensnd_query_hw_param *q)
{
    unsigned minw = 0;
    for (unsigned f = 0; f < SNDC_NR_FORMATS; f++)
        if (q->formats & (1ull << f)) {
            unsigned w = (unsigned)snd_pcm_format_physical_width(sndc_format_alsa(f)) / 8;
            minw = !minw || w < minw ? w : minw;
        }
    return minw && q->channels.min ? p->buffer_size / (minw * q->channels.min) : 0;
}

int sb_query(struct sb_stream *s, const struct xensnd_query_hw_param *in,
             struct xensnd_query_hw_param *out)
{
    struct xensnd_query_hw_param q = *in;
    const struct sndc_params *p = &s->p;
    q.formats &= p->formats & ((1ull << SNDC_NR_FORMATS) - 1);
    /* The advertised rates inside the range asked for. */
    uint32_t rlo = UINT32_MAX, rhi = 0;
    for (unsigned i = 0; i < p->nr_rates; i++)
        if (p->rates[i] >= q.rates.min && p->rates[i] <= q.rates.max) {
            rlo = p->rates[i] < rlo ? p->rates[i] : rlo;
            rhi = p->rates[i] > rhi ? p->rates[i] : rhi;
        }
    if (!q.formats || rlo > rhi || !narrow(&q.channels.min, &q.channels.max, p->ch_min, p->ch_max))
        return -XEN_EINVAL;
    q.rates.min = rlo;
    q.rates.max = rhi;
    uint32_t bmax = max_buffer_frames(p, &q);
    if (!bmax || !narrow(&q.buffer.min, &q.buffer.max, 1, bmax) ||
        !narrow(&q.period.min, &q.period.max, 1, q.buffer.max))
        return -XEN_EINVAL;
    if (s->open) {
        /* The PCM is busy with this configuration: that is what it takes. */
        uint32_t fr = s->buffer_sz / s->frame_bytes;
        if (!(q.formats & (1ull << s->format)) ||
            !narrow(&q.rates.min, &q.rates.max, s->rate, s->rate) ||
            !narrow(&q.channels.min, &q.channels.max, s->channels, s->channels) ||
            !narrow(&q.buffer.min, &q.buffer.max, 1, fr))
            return -XEN_EINVAL;
        q.formats = 1ull << s->format;
    } else {
        int st = ask_pcm(s, &q);
        if (st)
            return st;
    }
    /* The PCM may have narrowed the channels or formats: the buffer-size
     * bound again, for the frames that are left (a buffer of more frames
     * than buffer-size holds would be refused at OPEN). */
    bmax = max_buffer_frames(p, &q);
    if (!bmax || !narrow(&q.buffer.min, &q.buffer.max, 1, bmax) ||
        !narrow(&q.period.min, &q.period.max, 1, q.buffer.max))
        return -XEN_EINVAL;
    if (q.rates.min > q.rates.max || q.channels.min > q.channels.max ||
        q.buffer.min > q.buffer.max || q.period.min > q.period.max)
        return -XEN_EINVAL;
    *out = q;
    return 0;
}
