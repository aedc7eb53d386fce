/* sndref.c - sndcheck for content that carries no counter (mp3 through
 * mpg123, speech from espeak-ng): the long silences, and a comparison of the
 * frames played with a reference decode of the same source, which finds
 * frames missing from the recording, frames the reference does not have, and
 * frames that differ. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sndcheck.h"
#include "sndreport.h"

#define MATCH_WINDOW 32  /* frames that must agree to resynchronise */
#define SEARCH_S     10  /* how far ahead to look, in seconds */
#define CONFIRM_MS   500 /* how much must agree after a resynchronisation to prefer it */

struct flat {
    unsigned char *p;
    size_t frames;
    unsigned fb;
};

static void report_silences(const struct sndin *in, const struct check_opts *o,
                            struct check_tally *t)
{
    for (size_t si = 0; si < in->nstreams; si++) {
        const struct sndin_stream *s = &in->streams[si];
        unsigned fb = sndin_frame_bytes(s);
        uint64_t idx = 0, start = 0, len = 0, t_start = 0;
        for (size_t ci = 0; ci <= s->nchunks; ci++) {
            const struct sndin_chunk *c = ci < s->nchunks ? &s->chunks[ci] : NULL;
            for (uint64_t i = 0; c ? i < c->frames : i < 1; i++, idx++) {
                int zero = c && frame_is_zero(in->buf + c->off + i * fb, fb);
                if (zero) {
                    if (!len)
                        start = idx, t_start = frame_time(in, s, c, i);
                    len++;
                    t->silence++;
                    continue;
                }
                if (len && len * 1000.0 / s->rate >= o->silence_ms) {
                    rep_begin("silence");
                    rep_u64("stream", si);
                    rep_u64("at", start);
                    rep_u64("frames", len);
                    rep_f("ms", len * 1000.0 / s->rate);
                    rep_f("t_ms", (double)(t_start - frame_time(in, s, &s->chunks[0], 0)) / 1e6);
                    rep_end();
                }
                len = 0;
            }
        }
    }
}

/* The recording's frames, all streams in a row (they must share a layout). */
static int flatten(const struct sndin *in, struct flat *f)
{
    const struct sndin_stream *s0 = &in->streams[0];
    size_t total = 0;
    f->fb = sndin_frame_bytes(s0);
    for (size_t si = 0; si < in->nstreams; si++) {
        const struct sndin_stream *s = &in->streams[si];
        if (s->fmt != s0->fmt || s->channels != s0->channels)
            return -1;
        for (size_t ci = 0; ci < s->nchunks; ci++)
            total += s->chunks[ci].frames;
    }
    f->p = malloc(total * f->fb + 1);
    if (!f->p)
        return -1;
    f->frames = 0;
    for (size_t si = 0; si < in->nstreams; si++)
        for (size_t ci = 0; ci < in->streams[si].nchunks; ci++) {
            const struct sndin_chunk *c = &in->streams[si].chunks[ci];
            memcpy(f->p + f->frames * f->fb, in->buf + c->off, (size_t)c->frames * f->fb);
            f->frames += c->frames;
        }
    return 0;
}

static void trim_silence(const struct flat *f, size_t *lo, size_t *hi)
{
    *lo = 0, *hi = f->frames;
    while (*lo < *hi && frame_is_zero(f->p + *lo * f->fb, f->fb))
        (*lo)++;
    while (*hi > *lo && frame_is_zero(f->p + (*hi - 1) * f->fb, f->fb))
        (*hi)--;
}

/* Where pat's audio is in hay, in [from, limit): the start k of the first
 * stretch of hay that agrees with pat for `confirm` frames from pat's first
 * frame that is not silence (fewer where either side ends first: pat_left
 * frames are left of pat), its leading silence agreeing too; SIZE_MAX if none.
 * Silence is skipped for the search and does not confirm: a window of zeros
 * is found everywhere, and a pause then a word that speech says again (a
 * sentence's first word) is the same waveform again. The confirmation is
 * there because synthesizers and codecs repeat waveforms exactly: a window of
 * a vowel can be found a word early, and a resynchronisation there reports a
 * real cut as several cuts and extra frames. With confirm 0, the stretch
 * that agrees longest (up to cap frames) instead; *agree its length. */
static size_t find(const struct flat *hay, size_t from, size_t limit, const unsigned char *pat,
                   size_t pat_left, size_t confirm, size_t cap, size_t *agree)
{
    size_t fb = hay->fb, z = 0, best = SIZE_MAX, best_n = 0;
    while (z < pat_left && z < cap && frame_is_zero(pat + z * fb, fb))
        z++;
    if (z + MATCH_WINDOW > pat_left || z >= cap)
        return SIZE_MAX;
    if (limit + MATCH_WINDOW > hay->frames)
        limit = hay->frames >= MATCH_WINDOW ? hay->frames - MATCH_WINDOW + 1 : 0;
    for (size_t k = from + z; k < limit; k++) {
        if (memcmp(hay->p + k * fb, pat + z * fb, (size_t)MATCH_WINDOW * fb))
            continue;
        size_t start = k - z, n = 0;
        if (z && memcmp(hay->p + start * fb, pat, z * fb))
            continue; /* the silence before it is not there */
        if (confirm) {
            size_t c = confirm;
            if (c > pat_left - z)
                c = pat_left - z;
            if (c > hay->frames - k)
                c = hay->frames - k;
            if (!memcmp(hay->p + k * fb, pat + z * fb, c * fb))
                return start;
            continue;
        }
        while (n < cap && z + n < pat_left && k + n < hay->frames &&
               !memcmp(hay->p + (k + n) * fb, pat + (z + n) * fb, fb))
            n++;
        if (n > best_n)
            best_n = n, best = start;
    }
    if (agree)
        *agree = best_n;
    return best;
}

static void report_diff(const char *kind, size_t rec_at, size_t ref_at, size_t frames,
                        unsigned rate)
{
    rep_begin(kind);
    rep_u64("rec_at", rec_at);
    rep_u64("ref_at", ref_at);
    rep_u64("frames", frames);
    rep_f("ms", frames * 1000.0 / rate);
    rep_end();
}

static int compare_ref(const struct sndin *in, const struct check_opts *o, struct check_tally *t)
{
    const struct sndin_stream *s0 = &in->streams[0];
    struct sndin_raw raw = {1, s0->fmt, s0->channels, s0->rate};
    struct sndin refin;
    struct flat rec = {0}, ref = {0};
    char err[256];
    size_t i, j, ilo, ihi, jlo, jhi, bad_at = 0, bad = 0;

    if (sndin_load(o->ref, &raw, &refin, err, sizeof(err)) < 0) {
        fprintf(stderr, "sndcheck: reference %s\n", err);
        return -1;
    }
    const struct sndin_stream *r0 = &refin.streams[0];
    if (r0->fmt != s0->fmt || r0->channels != s0->channels || flatten(&refin, &ref) < 0 ||
        flatten(in, &rec) < 0) {
        rep_begin("ref-format");
        rep_s("recording", snd_fmt_name(s0->fmt));
        rep_u64("recording_channels", s0->channels);
        rep_s("reference", snd_fmt_name(r0->fmt));
        rep_u64("reference_channels", r0->channels);
        rep_end();
        t->format_errors++;
        goto out;
    }
    trim_silence(&rec, &ilo, &ihi);
    trim_silence(&ref, &jlo, &jhi);
    rec.frames = ihi, ref.frames = jhi;
    size_t search = (size_t)SEARCH_S * s0->rate;
    size_t confirm = (size_t)s0->rate * CONFIRM_MS / 1000;
    for (i = ilo, j = jlo; i < ihi && j < jhi;) {
        unsigned char *a = rec.p + i * rec.fb, *b = ref.p + j * ref.fb;
        if (!memcmp(a, b, rec.fb)) {
            if (bad)
                report_diff("ref-differ", bad_at, j - bad, bad, s0->rate), bad = 0;
            t->ref_matched++, i++, j++;
            continue;
        }
        /* Resynchronise on the nearer of: frames missing here, or frames extra
         * here. After a second that differs, only every 100 ms: each try
         * searches SEARCH_S of audio, and a recording that is not the
         * reference at all would otherwise take hours. */
        bool try = bad < s0->rate || bad % (s0->rate / 10 ? s0->rate / 10 : 1) == 0;
        size_t k1 = SIZE_MAX, k2 = SIZE_MAX;
        /* A confirmed resynchronisation first. Where none is (anomalies
         * closer together than CONFIRM_MS: a recovery that played a period
         * between two cuts), frames missing here if the audio that follows
         * agrees with the reference further on for 20 ms - what a cut looks
         * like - else the side that agrees longest. */
        if (try) {
            if (i + MATCH_WINDOW <= ihi)
                k1 = find(&ref, j + 1, j + search, a, ihi - i, confirm, confirm, NULL);
            if (j + MATCH_WINDOW <= jhi)
                k2 = find(&rec, i + 1, i + search, b, jhi - j, confirm, confirm, NULL);
        }
        if (try && k1 == SIZE_MAX && k2 == SIZE_MAX) {
            size_t n1 = 0, n2 = 0;
            if (i + MATCH_WINDOW <= ihi)
                k1 = find(&ref, j + 1, j + search, a, ihi - i, 0, confirm, &n1);
            if (j + MATCH_WINDOW <= jhi)
                k2 = find(&rec, i + 1, i + search, b, jhi - j, 0, confirm, &n2);
            if (k1 != SIZE_MAX && n1 >= s0->rate / 50)
                k2 = SIZE_MAX;
            else if (k1 != SIZE_MAX && k2 != SIZE_MAX && n1 != n2)
                *(n1 > n2 ? &k2 : &k1) = SIZE_MAX;
        }
        if (k1 != SIZE_MAX || k2 != SIZE_MAX) {
            if (bad)
                report_diff("ref-differ", bad_at, j - bad, bad, s0->rate), bad = 0;
            if (k1 != SIZE_MAX && (k2 == SIZE_MAX || k1 - j <= k2 - i)) {
                report_diff("ref-missing", i, j, k1 - j, s0->rate);
                t->gaps++, t->missing += k1 - j;
                j = k1;
            } else {
                report_diff("ref-extra", i, j, k2 - i, s0->rate);
                t->ref_extra += k2 - i;
                i = k2;
            }
            continue;
        }
        if (!bad)
            bad_at = i;
        bad++, t->ref_mismatched++, i++, j++;
    }
    if (bad)
        report_diff("ref-differ", bad_at, j - bad, bad, s0->rate);
    if (i < ihi) {
        report_diff("ref-extra", i, j, ihi - i, s0->rate);
        t->ref_extra += ihi - i;
    }
    if (j < jhi) {
        report_diff("ref-missing", i, j, jhi - j, s0->rate);
        t->gaps++, t->missing += jhi - j;
    }
    rep_begin("reference");
    rep_u64("ref_frames", jhi - jlo);
    rep_u64("rec_frames", ihi - ilo);
    rep_u64("matched", t->ref_matched);
    rep_u64("differ", t->ref_mismatched);
    rep_u64("extra", t->ref_extra);
    rep_u64("lead_silence_rec", ilo);
    rep_u64("lead_silence_ref", jlo);
    rep_end();
out:
    free(rec.p);
    free(ref.p);
    sndin_free(&refin);
    return 0;
}

int timing_check(const struct sndin *in, const struct check_opts *o, struct check_tally *t)
{
    for (size_t si = 0; si < in->nstreams; si++)
        for (size_t ci = 0; ci < in->streams[si].nchunks; ci++)
            t->frames += in->streams[si].chunks[ci].frames;
    report_silences(in, o, t);
    return o->ref ? compare_ref(in, o, t) : 0;
}
