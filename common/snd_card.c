/* snd_card.c - the card as the toolstack describes it (see snd_card.h). */
#define _GNU_SOURCE
#include "snd_card.h"

#include "pv-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xen/io/sndif.h>

struct rd {
    struct xs_handle *xs;
    char *msg;
    size_t len;
};

struct fmt {
    const char *name;
    unsigned bytes; /* of one sample; 0: no fixed size */
};

/* Indexed by XENSND_PCM_FORMAT_*. S24 is 24 bits in 4 octets, as ALSA's
 * S24_LE (which Linux's frontend maps it to). */
static const struct fmt fmts[SNDC_NR_FORMATS] = {
    [XENSND_PCM_FORMAT_S8] = {XENSND_PCM_FORMAT_S8_STR, 1},
    [XENSND_PCM_FORMAT_U8] = {XENSND_PCM_FORMAT_U8_STR, 1},
    [XENSND_PCM_FORMAT_S16_LE] = {XENSND_PCM_FORMAT_S16_LE_STR, 2},
    [XENSND_PCM_FORMAT_S16_BE] = {XENSND_PCM_FORMAT_S16_BE_STR, 2},
    [XENSND_PCM_FORMAT_U16_LE] = {XENSND_PCM_FORMAT_U16_LE_STR, 2},
    [XENSND_PCM_FORMAT_U16_BE] = {XENSND_PCM_FORMAT_U16_BE_STR, 2},
    [XENSND_PCM_FORMAT_S24_LE] = {XENSND_PCM_FORMAT_S24_LE_STR, 4},
    [XENSND_PCM_FORMAT_S24_BE] = {XENSND_PCM_FORMAT_S24_BE_STR, 4},
    [XENSND_PCM_FORMAT_U24_LE] = {XENSND_PCM_FORMAT_U24_LE_STR, 4},
    [XENSND_PCM_FORMAT_U24_BE] = {XENSND_PCM_FORMAT_U24_BE_STR, 4},
    [XENSND_PCM_FORMAT_S32_LE] = {XENSND_PCM_FORMAT_S32_LE_STR, 4},
    [XENSND_PCM_FORMAT_S32_BE] = {XENSND_PCM_FORMAT_S32_BE_STR, 4},
    [XENSND_PCM_FORMAT_U32_LE] = {XENSND_PCM_FORMAT_U32_LE_STR, 4},
    [XENSND_PCM_FORMAT_U32_BE] = {XENSND_PCM_FORMAT_U32_BE_STR, 4},
    [XENSND_PCM_FORMAT_F32_LE] = {XENSND_PCM_FORMAT_F32_LE_STR, 4},
    [XENSND_PCM_FORMAT_F32_BE] = {XENSND_PCM_FORMAT_F32_BE_STR, 4},
    [XENSND_PCM_FORMAT_F64_LE] = {XENSND_PCM_FORMAT_F64_LE_STR, 8},
    [XENSND_PCM_FORMAT_F64_BE] = {XENSND_PCM_FORMAT_F64_BE_STR, 8},
    [XENSND_PCM_FORMAT_IEC958_SUBFRAME_LE] = {XENSND_PCM_FORMAT_IEC958_SUBFRAME_LE_STR, 4},
    [XENSND_PCM_FORMAT_IEC958_SUBFRAME_BE] = {XENSND_PCM_FORMAT_IEC958_SUBFRAME_BE_STR, 4},
    [XENSND_PCM_FORMAT_MU_LAW] = {XENSND_PCM_FORMAT_MU_LAW_STR, 1},
    [XENSND_PCM_FORMAT_A_LAW] = {XENSND_PCM_FORMAT_A_LAW_STR, 1},
    [XENSND_PCM_FORMAT_IMA_ADPCM] = {XENSND_PCM_FORMAT_IMA_ADPCM_STR, 0},
    [XENSND_PCM_FORMAT_MPEG] = {XENSND_PCM_FORMAT_MPEG_STR, 0},
    [XENSND_PCM_FORMAT_GSM] = {XENSND_PCM_FORMAT_GSM_STR, 0},
};

static const uint32_t default_rates[] = {8000,  11025, 16000, 22050,  32000, 44100,
                                         48000, 88200, 96000, 176400, 192000};

const char *sndc_format_name(unsigned f)
{
    return f < SNDC_NR_FORMATS ? fmts[f].name : "?";
}

int sndc_format_parse(const char *s)
{
    for (unsigned f = 0; f < SNDC_NR_FORMATS; f++)
        if (!strcmp(s, fmts[f].name))
            return (int)f;
    return -1;
}

unsigned sndc_format_bytes(unsigned f)
{
    return f < SNDC_NR_FORMATS ? fmts[f].bytes : 0;
}

bool sndc_has_rate(const struct sndc_params *p, uint32_t r)
{
    for (unsigned i = 0; i < p->nr_rates; i++)
        if (p->rates[i] == r)
            return true;
    return false;
}

static int fail(struct rd *r, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct rd *r, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, r->len, fmt, ap);
    va_end(ap);
    errno = err;
    return -1;
}

static int bad(struct rd *r, const char *dir, const char *key, const char *v, const char *why)
{
    return fail(r, EINVAL, "%s/%s '%s': %s", dir, key, v ? v : "", why);
}

/* A key of this level; NULL with *err 0 when absent. */
static char *get(struct rd *r, const char *dir, const char *key, int *err)
{
    char *v = xsu_read(r->xs, XBT_NULL, dir, key, 1024);
    *err = 0;
    if (!v && errno != ENOENT)
        *err = fail(r, errno, "reading %s/%s: %s", dir, key, strerror(errno));
    return v;
}

static int parse_rates(struct rd *r, const char *dir, const char *v, struct sndc_params *out)
{
    unsigned n = 0;
    const char *p = v;
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9')
            return bad(r, dir, PVK_SND_SAMPLE_RATES, v, "not a list of rates");
        errno = 0;
        unsigned long rate = strtoul(p, &end, 10);
        if (errno || rate == 0 || rate > SNDC_MAX_RATE || (*end && *end != ','))
            return bad(r, dir, PVK_SND_SAMPLE_RATES, v, "a rate is not 1..768000 Hz");
        if (n == SNDC_MAX_RATES)
            return bad(r, dir, PVK_SND_SAMPLE_RATES, v, "more than 32 rates");
        out->nr_rates = n;
        if (!sndc_has_rate(out, (uint32_t)rate))
            out->rates[n++] = (uint32_t)rate;
        out->nr_rates = n;
        if (!*end)
            return 0;
        p = end + 1;
    }
}

static int parse_formats(struct rd *r, const char *dir, const char *v, uint64_t *out)
{
    *out = 0;
    char *copy = strdup(v), *save = NULL;
    if (!copy)
        return fail(r, ENOMEM, "out of memory");
    uint64_t m = 0;
    int rc = 0;
    if (!*v || v[strlen(v) - 1] == ',')
        rc = bad(r, dir, PVK_SND_SAMPLE_FORMATS, v, "empty item");
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        int f = sndc_format_parse(t);
        if (f < 0)
            rc = bad(r, dir, PVK_SND_SAMPLE_FORMATS, v, "unknown format");
        else if (!sndc_format_bytes((unsigned)f))
            rc = bad(r, dir, PVK_SND_SAMPLE_FORMATS, v,
                     "a format without a fixed sample size is not served");
        else
            m |= 1ull << f;
    }
    free(copy);
    *out = m;
    return rc;
}

static int read_num(struct rd *r, const char *dir, const char *key, uint64_t lo, uint64_t hi,
                    bool *set, uint64_t *out)
{
    int err;
    char *v = get(r, dir, key, &err);
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
        rc = bad(r, dir, key, v, why);
    } else {
        *set = true;
        *out = n;
    }
    free(v);
    return rc;
}

/* One level's settings over its parent's (inherited), checking that it only
 * narrows them; the card (root) replaces the defaults instead. */
static int read_level(struct rd *r, const char *dir, const struct sndc_params *parent, bool root,
                      struct sndc_params *out)
{
    *out = *parent;
    int err;
    char *v = get(r, dir, PVK_SND_SAMPLE_RATES, &err);
    if (err)
        return -1;
    if (v) {
        struct sndc_params mine = {0};
        int rc = parse_rates(r, dir, v, &mine);
        for (unsigned i = 0; !rc && !root && i < mine.nr_rates; i++)
            if (!sndc_has_rate(parent, mine.rates[i]))
                rc = bad(r, dir, PVK_SND_SAMPLE_RATES, v,
                         "not a subset of the rates of the level above");
        free(v);
        if (rc)
            return -1;
        memcpy(out->rates, mine.rates, sizeof(mine.rates));
        out->nr_rates = mine.nr_rates;
    }
    v = get(r, dir, PVK_SND_SAMPLE_FORMATS, &err);
    if (err)
        return -1;
    if (v) {
        uint64_t m;
        int rc = parse_formats(r, dir, v, &m);
        if (!rc && !root && (m & ~parent->formats))
            rc = bad(r, dir, PVK_SND_SAMPLE_FORMATS, v,
                     "not a subset of the formats of the level above");
        free(v);
        if (rc)
            return -1;
        out->formats = m;
    }
    bool set;
    uint64_t n;
    if (read_num(r, dir, PVK_SND_CHANNELS_MIN, 1, SNDC_MAX_CHANNELS, &set, &n) < 0)
        return -1;
    if (set)
        out->ch_min = (unsigned)n;
    if (read_num(r, dir, PVK_SND_CHANNELS_MAX, 1, SNDC_MAX_CHANNELS, &set, &n) < 0)
        return -1;
    if (set)
        out->ch_max = (unsigned)n;
    if (root && out->ch_max < out->ch_min && !set)
        out->ch_max = out->ch_min; /* channels-min alone above the default maximum */
    if (out->ch_min > out->ch_max ||
        (!root && (out->ch_min < parent->ch_min || out->ch_max > parent->ch_max)))
        return fail(r, EINVAL,
                    "%s: channels %u..%u are empty or not inside %u..%u of the level above", dir,
                    out->ch_min, out->ch_max, parent->ch_min, parent->ch_max);
    if (read_num(r, dir, PVK_SND_BUFFER_SIZE, 1, root ? SNDC_MAX_BUFFER : parent->buffer_size, &set,
                 &n) < 0)
        return -1;
    if (set)
        out->buffer_size = (uint32_t)n;
    return 0;
}

static bool exists(struct rd *r, const char *dir)
{
    unsigned n;
    char **ls = xs_directory(r->xs, XBT_NULL, dir, &n);
    free(ls);
    return ls != NULL;
}

static int read_unique_id(struct rd *r, struct sndc_card *c, struct sndc_stream *s)
{
    int err;
    char *v = get(r, s->dir, PVK_SND_UNIQUE_ID, &err);
    if (!v)
        return err ? -1 : fail(r, ENOENT, "%s/%s: missing", s->dir, PVK_SND_UNIQUE_ID);
    int rc = 0;
    if (!*v || strlen(v) >= sizeof(s->unique_id))
        rc = bad(r, s->dir, PVK_SND_UNIQUE_ID, v, "empty or over 127 bytes");
    for (const char *q = v; !rc && *q; q++)
        if ((unsigned char)*q < ' ' || *q == 0x7f)
            rc = bad(r, s->dir, PVK_SND_UNIQUE_ID, v, "a control character");
    for (unsigned i = 0; !rc && i < c->nr_streams; i++)
        if (!strcmp(c->st[i].unique_id, v))
            rc = bad(r, s->dir, PVK_SND_UNIQUE_ID, v, "not unique on the card");
    if (!rc)
        snprintf(s->unique_id, sizeof(s->unique_id), "%s", v);
    free(v);
    return rc;
}

static int read_stream(struct rd *r, struct sndc_card *c, const char *pcmdir, unsigned pcm,
                       unsigned idx, const struct sndc_params *pp)
{
    if (c->nr_streams == SNDC_MAX_STREAMS)
        return fail(r, E2BIG, "%s: more than %u streams on the card", pcmdir, SNDC_MAX_STREAMS);
    struct sndc_stream *s = &c->st[c->nr_streams];
    memset(s, 0, sizeof(*s));
    s->pcm_idx = pcm;
    s->idx = idx;
    if (snprintf(s->dir, sizeof(s->dir), "%s/%u", pcmdir, idx) >= (int)sizeof(s->dir))
        return fail(r, ENAMETOOLONG, "%s/%u: path too long", pcmdir, idx);
    int err;
    char *v = get(r, s->dir, PVK_SND_TYPE, &err);
    if (!v)
        return err ? -1 : fail(r, ENOENT, "%s/%s: missing (p or c)", s->dir, PVK_SND_TYPE);
    bool p = !strcmp(v, PVK_SND_TYPE_PLAYBACK), cap = !strcmp(v, PVK_SND_TYPE_CAPTURE);
    int rc = p || cap ? 0 : bad(r, s->dir, PVK_SND_TYPE, v, "not p or c");
    free(v);
    if (rc)
        return -1;
    s->capture = cap;
    if (read_unique_id(r, c, s) < 0 || read_level(r, s->dir, pp, false, &s->p) < 0)
        return -1;
    if (!s->p.nr_rates || !s->p.formats)
        return fail(r, EINVAL, "%s: no sample rate or no sample format left", s->dir);
    c->nr_streams++;
    return 0;
}

static void read_name(struct rd *r, const char *dir, const char *key, char *out, size_t len)
{
    char *v = xsu_read(r->xs, XBT_NULL, dir, key, 1024);
    snprintf(out, len, "%s", v ? v : "");
    free(v);
}

int sndc_read(struct xs_handle *xs, const char *fe, struct sndc_card *c, char *msg, size_t len)
{
    struct rd r = {.xs = xs, .msg = msg, .len = len};
    struct sndc_params top = {.ch_min = 1, .ch_max = 2, .buffer_size = SNDC_DEFAULT_BUFFER};
    memcpy(top.rates, default_rates, sizeof(default_rates));
    top.nr_rates = sizeof(default_rates) / sizeof(default_rates[0]);
    top.formats = 1ull << XENSND_PCM_FORMAT_U8 | 1ull << XENSND_PCM_FORMAT_S16_LE |
                  1ull << XENSND_PCM_FORMAT_S24_LE | 1ull << XENSND_PCM_FORMAT_S32_LE |
                  1ull << XENSND_PCM_FORMAT_F32_LE;
    memset(c, 0, sizeof(*c));
    read_name(&r, fe, PVK_SND_SHORT_NAME, c->short_name, sizeof(c->short_name));
    read_name(&r, fe, PVK_SND_LONG_NAME, c->long_name, sizeof(c->long_name));
    struct sndc_params card;
    if (read_level(&r, fe, &top, true, &card) < 0)
        return -1;
    for (unsigned pcm = 0; pcm < SNDC_MAX_PCMS; pcm++) {
        char pdir[160];
        snprintf(pdir, sizeof(pdir), "%s/%u", fe, pcm);
        if (!exists(&r, pdir))
            break;
        struct sndc_params pp;
        if (read_level(&r, pdir, &card, false, &pp) < 0)
            return -1;
        unsigned before = c->nr_streams;
        for (unsigned i = 0;; i++) {
            char sdir[200];
            snprintf(sdir, sizeof(sdir), "%s/%u", pdir, i);
            if (!exists(&r, sdir))
                break;
            if (read_stream(&r, c, pdir, pcm, i, &pp) < 0)
                return -1;
        }
        if (c->nr_streams == before)
            return fail(&r, EINVAL, "%s: a PCM device without streams", pdir);
        c->nr_pcms = pcm + 1;
    }
    if (!c->nr_streams)
        return fail(&r, ENOENT, "%s: no PCM device with a stream (0/0/type, 0/0/unique-id)", fe);
    return 0;
}
