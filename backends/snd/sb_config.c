/* sb_config.c - the card as the toolstack describes it. libxl writes an xl
 * vsnd= line into the frontend's dir (libxl_vsnd.c; sndif.h "Card
 * configuration"): card, then <pcm>/ devices, then <pcm>/<stream>/ streams,
 * each level optionally with sample-rates, sample-formats, channels-min/max
 * and buffer-size. A level inherits what it does not set and may only
 * narrow what it does (sndif.h: "the underlying layer must be a subset of
 * the upper layer"). The guest can write that dir, so every value is
 * checked as peer input.
 */
#define _GNU_SOURCE
#include "sb.h"

#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RATE 768000u

static const uint32_t default_rates[] = {8000,  11025, 16000, 22050,  32000, 44100,
                                         48000, 88200, 96000, 176400, 192000};

static bool has_rate(const struct sb_params *p, uint32_t r)
{
    for (unsigned i = 0; i < p->nr_rates; i++)
        if (p->rates[i] == r)
            return true;
    return false;
}

static int bad(struct sb_dev *d, const char *dir, const char *key, const char *v, const char *why)
{
    be_error(d->be, EINVAL, "%s/%s '%s': %s", dir, key, v ? v : "", why);
    return -1;
}

/* A key of this level; NULL and errno ENOENT when absent. */
static char *rd(struct sb_dev *d, const char *dir, const char *key, int *err)
{
    char *v = xsu_read(be_xs(d->be), XBT_NULL, dir, key, 1024);
    *err = 0;
    if (!v && errno != ENOENT) {
        be_error(d->be, errno, "reading %s/%s: %s", dir, key, strerror(errno));
        *err = -1;
    }
    return v;
}

static int parse_rates(struct sb_dev *d, const char *dir, const char *v, struct sb_params *out)
{
    unsigned n = 0;
    const char *p = v;
    while (1) {
        char *end;
        if (*p < '0' || *p > '9')
            return bad(d, dir, XENSND_FIELD_SAMPLE_RATES, v, "not a list of rates");
        errno = 0;
        unsigned long r = strtoul(p, &end, 10);
        if (errno || r == 0 || r > MAX_RATE || (*end && *end != ','))
            return bad(d, dir, XENSND_FIELD_SAMPLE_RATES, v, "a rate is not 1..768000 Hz");
        if (n == SB_MAX_RATES)
            return bad(d, dir, XENSND_FIELD_SAMPLE_RATES, v, "more than 32 rates");
        out->nr_rates = n;
        if (!has_rate(out, (uint32_t)r))
            out->rates[n++] = (uint32_t)r;
        out->nr_rates = n;
        if (!*end)
            break;
        p = end + 1;
    }
    return 0;
}

static int parse_formats(struct sb_dev *d, const char *dir, const char *v, uint64_t *out)
{
    char *copy = strdup(v), *save = NULL;
    if (!copy) {
        be_error(d->be, ENOMEM, "out of memory");
        return -1;
    }
    uint64_t m = 0;
    int rc = 0;
    if (!*v || v[strlen(v) - 1] == ',')
        rc = bad(d, dir, XENSND_FIELD_SAMPLE_FORMATS, v, "empty item");
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        int f = sb_format_parse(t);
        if (f < 0)
            rc = bad(d, dir, XENSND_FIELD_SAMPLE_FORMATS, v, "unknown format");
        else if (sb_format_alsa((unsigned)f) == SND_PCM_FORMAT_UNKNOWN ||
                 snd_pcm_format_physical_width(sb_format_alsa((unsigned)f)) < 8)
            rc = bad(d, dir, XENSND_FIELD_SAMPLE_FORMATS, v,
                     "a format without a fixed sample size is not served");
        else
            m |= 1ull << f;
    }
    free(copy);
    *out = m;
    return rc;
}

static int read_num(struct sb_dev *d, const char *dir, const char *key, uint64_t lo, uint64_t hi,
                    bool *set, uint64_t *out)
{
    int err;
    char *v = rd(d, dir, key, &err);
    *set = false;
    if (!v)
        return err;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    int rc = 0;
    if (*v < '0' || *v > '9' || *end || errno || n < lo || n > hi) {
        char why[64];
        snprintf(why, sizeof(why), "not a number in %llu..%llu", (unsigned long long)lo,
                 (unsigned long long)hi);
        rc = bad(d, dir, key, v, why);
    } else {
        *set = true;
        *out = n;
    }
    free(v);
    return rc;
}

/* Read one level's settings over its parent's (inherited), checking that
 * it only narrows them; the card (root) replaces the defaults instead. */
static int read_level(struct sb_dev *d, const char *dir, const struct sb_params *parent, bool root,
                      struct sb_params *out)
{
    *out = *parent;
    int err;
    char *v = rd(d, dir, XENSND_FIELD_SAMPLE_RATES, &err);
    if (err)
        return -1;
    if (v) {
        struct sb_params mine = {0};
        int rc = parse_rates(d, dir, v, &mine);
        for (unsigned i = 0; !rc && !root && i < mine.nr_rates; i++)
            if (!has_rate(parent, mine.rates[i]))
                rc = bad(d, dir, XENSND_FIELD_SAMPLE_RATES, v,
                         "not a subset of the rates of the level above");
        free(v);
        if (rc)
            return -1;
        memcpy(out->rates, mine.rates, sizeof(mine.rates));
        out->nr_rates = mine.nr_rates;
    }
    v = rd(d, dir, XENSND_FIELD_SAMPLE_FORMATS, &err);
    if (err)
        return -1;
    if (v) {
        uint64_t m;
        int rc = parse_formats(d, dir, v, &m);
        if (!rc && !root && (m & ~parent->formats))
            rc = bad(d, dir, XENSND_FIELD_SAMPLE_FORMATS, v,
                     "not a subset of the formats of the level above");
        free(v);
        if (rc)
            return -1;
        out->formats = m;
    }
    bool set;
    uint64_t n;
    if (read_num(d, dir, XENSND_FIELD_CHANNELS_MIN, 1, SB_MAX_CHANNELS, &set, &n) < 0)
        return -1;
    if (set)
        out->ch_min = (unsigned)n;
    if (read_num(d, dir, XENSND_FIELD_CHANNELS_MAX, 1, SB_MAX_CHANNELS, &set, &n) < 0)
        return -1;
    if (set)
        out->ch_max = (unsigned)n;
    if (root && out->ch_max < out->ch_min && !set)
        out->ch_max = out->ch_min; /* channels-min alone above the default maximum */
    if (out->ch_min > out->ch_max ||
        (!root && (out->ch_min < parent->ch_min || out->ch_max > parent->ch_max))) {
        be_error(d->be, EINVAL,
                 "%s: channels %u..%u are empty or not inside %u..%u of the level above", dir,
                 out->ch_min, out->ch_max, parent->ch_min, parent->ch_max);
        return -1;
    }
    if (read_num(d, dir, XENSND_FIELD_BUFFER_SIZE, 1, root ? SB_MAX_BUFFER : parent->buffer_size,
                 &set, &n) < 0)
        return -1;
    if (set)
        out->buffer_size = (uint32_t)n;
    return 0;
}

static bool exists(struct sb_dev *d, const char *dir)
{
    unsigned n;
    char **ls = xs_directory(be_xs(d->be), XBT_NULL, dir, &n);
    free(ls);
    return ls != NULL;
}

static int read_stream(struct sb_dev *d, const char *pcmdir, unsigned pcm, unsigned idx,
                       const struct sb_params *pp)
{
    if (d->nr_streams == SB_MAX_STREAMS) {
        be_error(d->be, E2BIG, "%s: more than %u streams on the card", pcmdir, SB_MAX_STREAMS);
        return -1;
    }
    struct sb_stream *s = &d->st[d->nr_streams];
    memset(s, 0, sizeof(*s));
    s->d = d;
    s->pcm_idx = pcm;
    s->idx = idx;
    s->pcm.epfd = -1;
    if (snprintf(s->dir, sizeof(s->dir), "%s/%u", pcmdir, idx) >= (int)sizeof(s->dir)) {
        be_error(d->be, ENAMETOOLONG, "%s/%u: path too long", pcmdir, idx);
        return -1;
    }
    int err;
    char *v = rd(d, s->dir, XENSND_FIELD_TYPE, &err);
    if (!v) {
        if (!err)
            be_error(d->be, ENOENT, "%s/%s: missing (p or c)", s->dir, XENSND_FIELD_TYPE);
        return -1;
    }
    bool p = !strcmp(v, XENSND_STREAM_TYPE_PLAYBACK), c = !strcmp(v, XENSND_STREAM_TYPE_CAPTURE);
    int rc = p || c ? 0 : bad(d, s->dir, XENSND_FIELD_TYPE, v, "not p or c");
    free(v);
    if (rc)
        return -1;
    s->capture = c;
    v = rd(d, s->dir, XENSND_FIELD_STREAM_UNIQUE_ID, &err);
    if (!v) {
        if (!err)
            be_error(d->be, ENOENT, "%s/%s: missing", s->dir, XENSND_FIELD_STREAM_UNIQUE_ID);
        return -1;
    }
    if (!*v || strlen(v) >= sizeof(s->unique_id))
        rc = bad(d, s->dir, XENSND_FIELD_STREAM_UNIQUE_ID, v, "empty or over 127 bytes");
    for (const char *q = v; !rc && *q; q++)
        if ((unsigned char)*q < ' ' || *q == 0x7f)
            rc = bad(d, s->dir, XENSND_FIELD_STREAM_UNIQUE_ID, v, "a control character");
    for (unsigned i = 0; !rc && i < d->nr_streams; i++)
        if (!strcmp(d->st[i].unique_id, v))
            rc = bad(d, s->dir, XENSND_FIELD_STREAM_UNIQUE_ID, v, "not unique on the card");
    if (!rc) {
        snprintf(s->unique_id, sizeof(s->unique_id), "%s", v);
        /* "alsa:<pcm>" names the stream's PCM; "#<tag>" after it keeps two
         * streams on one PCM (its playback and capture) unique. */
        if (!strncmp(v, "alsa:", 5)) {
            snprintf(s->pcm_name, sizeof(s->pcm_name), "%s", v + 5);
            s->pcm_name[strcspn(s->pcm_name, "#")] = 0;
            if (!s->pcm_name[0])
                rc = bad(d, s->dir, XENSND_FIELD_STREAM_UNIQUE_ID, v, "alsa: without a PCM name");
        }
    }
    free(v);
    if (rc || read_level(d, s->dir, pp, false, &s->p) < 0)
        return -1;
    if (!s->p.nr_rates || !s->p.formats) {
        be_error(d->be, EINVAL, "%s: no sample rate or no sample format left", s->dir);
        return -1;
    }
    d->nr_streams++;
    return 0;
}

static void read_name(struct sb_dev *d, const char *dir, const char *key, char *out, size_t len)
{
    char *v = xsu_read(be_xs(d->be), XBT_NULL, dir, key, 1024);
    snprintf(out, len, "%s", v ? v : "");
    free(v);
}

int sb_config_read(struct sb_dev *d)
{
    const char *fe = be_fe_path(d->be);
    struct sb_params top = {.ch_min = 1, .ch_max = 2, .buffer_size = SB_DEFAULT_BUFFER};
    memcpy(top.rates, default_rates, sizeof(default_rates));
    top.nr_rates = sizeof(default_rates) / sizeof(default_rates[0]);
    top.formats = 1ull << XENSND_PCM_FORMAT_U8 | 1ull << XENSND_PCM_FORMAT_S16_LE |
                  1ull << XENSND_PCM_FORMAT_S24_LE | 1ull << XENSND_PCM_FORMAT_S32_LE |
                  1ull << XENSND_PCM_FORMAT_F32_LE;
    d->nr_streams = 0;
    read_name(d, fe, XENSND_FIELD_VCARD_SHORT_NAME, d->short_name, sizeof(d->short_name));
    read_name(d, fe, XENSND_FIELD_VCARD_LONG_NAME, d->long_name, sizeof(d->long_name));
    struct sb_params card;
    if (read_level(d, fe, &top, true, &card) < 0)
        return -1;

    for (unsigned pcm = 0; pcm < SB_MAX_PCMS; pcm++) {
        char pdir[160];
        snprintf(pdir, sizeof(pdir), "%s/%u", fe, pcm);
        if (!exists(d, pdir))
            break;
        struct sb_params pp;
        if (read_level(d, pdir, &card, false, &pp) < 0)
            return -1;
        unsigned before = d->nr_streams;
        for (unsigned i = 0;; i++) {
            char sdir[200];
            snprintf(sdir, sizeof(sdir), "%s/%u", pdir, i);
            if (!exists(d, sdir))
                break;
            if (read_stream(d, pdir, pcm, i, &pp) < 0)
                return -1;
        }
        if (d->nr_streams == before) {
            be_error(d->be, EINVAL, "%s: a PCM device without streams", pdir);
            return -1;
        }
    }
    if (!d->nr_streams) {
        be_error(d->be, ENOENT, "%s: no PCM device with a stream (0/0/type, 0/0/unique-id)", fe);
        return -1;
    }
    return 0;
}
