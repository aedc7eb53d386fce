/* sndcheck - analyse what the clocked test PCM played (or any raw or WAV capture).
 *
 *   sndcheck [--json] [--timing [--ref FILE] [--silence-ms MS]]
 *            [--format F --rate R --channels C] [--max-gaps N] [--max-gap-ms MS]
 *            [--max-underruns N] FILE
 *
 * FILE is a recording of the clocked PCM (tests/snd/usck.h), a WAV file, or
 * raw frames (then --format, --rate and --channels say their layout). By
 * default the frames must carry sndgen's frame counter (framecode.h); it
 * reports every run of consecutive frames, every gap (frames missing, the
 * stream time they stand for, and the wall-clock hole from the timestamps),
 * every repeat, channel-order error, corrupt or silent stretch, and a wrong
 * format. --timing is for content without a counter: underruns, long
 * silences, and with --ref a frame-exact comparison with a reference decode.
 * For every stream of a recording: its underruns (periods the clock ran with
 * no data; the stream's final short periods are its tail, not underruns),
 * xruns, and its rate measured from the timestamps. Output: one line per
 * finding, text or (--json) JSON lines, ending with a summary. A last
 * record cut short (its writer was killed) is reported and skipped.
 *
 * Exit status: 0 clean; 1 a content error (repeat, channel order, corrupt
 * frames, wrong format, frames differing from or not in the reference);
 * 2 bad usage or an unreadable file; 3 more gaps or underruns, or a longer
 * one, than --max-gaps / --max-underruns / --max-gap-ms allow (gaps alone
 * never fail: the caller says what it allows).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sndcheck.h"
#include "sndreport.h"

uint64_t frame_time(const struct sndin *in, const struct sndin_stream *s,
                    const struct sndin_chunk *c, uint64_t i)
{
    if (in->timed)
        return c->t_ns + i * 1000000000u / s->rate;
    /* WAV and raw: the position in the file is the only clock. */
    uint64_t idx = (c->off - s->chunks[0].off) / sndin_frame_bytes(s) + i;
    return idx * 1000000000u / s->rate;
}

int frame_is_zero(const unsigned char *p, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++)
        if (p[i])
            return 0;
    return 1;
}

/* The stream's rate against CLOCK_MONOTONIC, from when the plugin saw each
 * tick. A tick is never seen before it falls, but it is seen late when the
 * application was away (on a loaded machine most are, by more than a
 * millisecond); so the slope is taken along the lower envelope: between the
 * least-late tick of the recording's first third and that of its last
 * third. 0 when there is too little. */
static const struct sndin_chunk *least_late(const struct sndin_stream *s, size_t from, size_t to)
{
    double period_ns = (double)s->period * 1e9 / s->rate, min_lag = 1e18;
    const struct sndin_chunk *best = NULL;
    for (size_t i = from; i < to; i++) {
        const struct sndin_chunk *c = &s->chunks[i];
        double lag = (double)c->t_seen_ns - (double)c->t_ns - period_ns;
        if (lag < min_lag) {
            min_lag = lag;
            best = c;
        }
    }
    return best;
}

static double measured_rate(const struct sndin_stream *s)
{
    size_t third = s->nchunks / 3;
    if (!third)
        return 0;
    const struct sndin_chunk *a = least_late(s, 0, third);
    const struct sndin_chunk *z = least_late(s, s->nchunks - third, s->nchunks);
    if (!a || !z || z->t_seen_ns <= a->t_seen_ns || z->t_seen_ns - a->t_seen_ns < 100000000u)
        return 0;
    return (double)(z->pos - a->pos) * 1e9 / (double)(z->t_seen_ns - a->t_seen_ns);
}

/* One line per stream of a recording, and its underruns. */
static void report_stream(const struct sndin *in, size_t si, struct check_tally *t)
{
    const struct sndin_stream *s = &in->streams[si];
    uint64_t frames = 0;
    size_t last_full = 0, n = s->nchunks;
    for (size_t ci = 0; ci < n; ci++) {
        frames += s->chunks[ci].frames;
        if (!s->chunks[ci].fill)
            last_full = ci;
    }
    rep_begin("stream");
    rep_u64("index", si);
    if (in->timed)
        rep_s("dir", s->capture ? "capture" : "playback");
    rep_s("format", snd_fmt_name(s->fmt));
    rep_u64("channels", s->channels);
    rep_u64("rate", s->rate);
    rep_u64("frames", frames);
    if (in->timed && n) {
        const struct sndin_chunk *a = &s->chunks[0], *z = &s->chunks[n - 1];
        double clock_s = (double)(z->pos + s->period - a->pos) / s->rate;
        double seen_s = (double)(z->t_seen_ns - a->t_seen_ns) / 1e9;
        rep_u64("period", s->period);
        rep_u64("buffer", s->buffer);
        rep_u64("periods", n);
        rep_f("clock_s", clock_s);
        rep_f("wall_s", seen_s + (double)s->period / s->rate);
        double rate = measured_rate(s);
        if (rate > 0)
            rep_f("rate_measured", rate);
        rep_f("t_start_s", (double)a->t_ns / 1e9);
        rep_u64("xruns", s->xruns);
        rep_u64("pauses", s->pauses);
        rep_u64("pid", s->pid);
    }
    rep_end();
    t->xruns += s->xruns;
    if (!in->timed || !n)
        return;
    /* Underruns: the short periods before the last full one, stretches merged. */
    for (size_t ci = 0; ci < last_full; ci++) {
        if (!s->chunks[ci].fill)
            continue;
        uint64_t pos = s->chunks[ci].pos + s->chunks[ci].frames, fill = 0;
        size_t cj = ci;
        for (; cj < last_full && s->chunks[cj].fill; cj++)
            fill += s->chunks[cj].fill;
        double ms = (double)fill * 1000.0 / s->rate;
        rep_begin("underrun");
        rep_u64("stream", si);
        rep_u64("pos", pos);
        rep_u64("frames", fill);
        rep_f("ms", ms);
        rep_end();
        t->underruns++, t->underrun_frames += fill;
        if (ms > t->max_underrun_ms)
            t->max_underrun_ms = ms;
        ci = cj;
    }
    uint64_t tail = 0;
    for (size_t ci = last_full + 1; ci < n; ci++)
        tail += s->chunks[ci].fill;
    if (s->chunks[last_full].fill) /* no full period at all */
        tail += s->chunks[last_full].fill;
    if (s->xruns && !s->capture) {
        /* A stream that ended in an xrun ran dry: that is an underrun, with its
         * tail (none if the last data filled the last period exactly). */
        double ms = (double)tail * 1000.0 / s->rate;
        rep_begin("underrun");
        rep_u64("stream", si);
        rep_u64("pos", s->chunks[last_full].pos + s->period);
        rep_u64("frames", tail);
        rep_f("ms", ms);
        rep_s("xrun", "yes");
        rep_end();
        t->underruns++, t->underrun_frames += tail;
        if (ms > t->max_underrun_ms)
            t->max_underrun_ms = ms;
    } else if (tail) {
        rep_begin("tail");
        rep_u64("stream", si);
        rep_u64("frames", tail);
        rep_f("ms", (double)tail * 1000.0 / s->rate);
        rep_end();
    }
}

/* Wall time between the end of one stream and the start of the next. */
static void report_stream_gap(const struct sndin *in, size_t si)
{
    const struct sndin_stream *a = &in->streams[si - 1], *b = &in->streams[si];
    if (!in->timed || !a->nchunks || !b->nchunks)
        return;
    const struct sndin_chunk *z = &a->chunks[a->nchunks - 1], *f = &b->chunks[0];
    double end_ns = (double)z->t_ns + (double)z->frames * 1e9 / a->rate;
    rep_begin("stream-gap");
    rep_u64("before", si);
    rep_f("wall_ms", ((double)f->t_ns - end_ns) / 1e6);
    rep_end();
}

static int parse_num(const char *opt, const char *s, double max, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (errno || end == s || *end || !(*v >= 0) || *v > max) {
        fprintf(stderr, "sndcheck: bad %s %s\n", opt, s);
        return -1;
    }
    return 0;
}

static void usage(FILE *f)
{
    fputs("usage: sndcheck [--json] [--timing [--ref FILE] [--silence-ms MS]]\n"
          "                [--format F --rate R --channels C] [--max-gaps N] [--max-gap-ms MS]\n"
          "                [--max-underruns N] FILE\n",
          f);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"timing", no_argument, NULL, 't'},
                                             {"ref", required_argument, NULL, 'R'},
                                             {"silence-ms", required_argument, NULL, 's'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"rate", required_argument, NULL, 'r'},
                                             {"channels", required_argument, NULL, 'c'},
                                             {"max-gaps", required_argument, NULL, 'g'},
                                             {"max-gap-ms", required_argument, NULL, 'm'},
                                             {"max-underruns", required_argument, NULL, 'u'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct check_opts o = {.silence_ms = 50};
    struct check_tally t = {0};
    double max_gaps = -1, max_gap_ms = -1, max_underruns = -1, v;
    int timing = 0, opt, fmt_given = 0, rate_given = 0, ch_given = 0;
    struct sndin in;
    char err[512];

    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'j':
            report_json = 1;
            break;
        case 't':
            timing = 1;
            break;
        case 'R':
            o.ref = optarg;
            break;
        case 's':
            if (parse_num("--silence-ms", optarg, 1e9, &o.silence_ms))
                return 2;
            break;
        case 'f': {
            int f = snd_fmt_parse(optarg);
            if (f < 0) {
                fprintf(stderr, "sndcheck: bad format %s (S16_LE, S24_LE or S32_LE)\n", optarg);
                return 2;
            }
            o.raw.fmt = f, fmt_given = 1;
            break;
        }
        case 'r':
            if (parse_num("--rate", optarg, 768000, &v) || v < 1000 || v != floor(v))
                return fprintf(stderr, "sndcheck: --rate wants 1000-768000\n"), 2;
            o.raw.rate = (unsigned)v, rate_given = 1;
            break;
        case 'c':
            if (parse_num("--channels", optarg, 8, &v) || v < 1 || v != floor(v))
                return fprintf(stderr, "sndcheck: --channels wants 1-8\n"), 2;
            o.raw.channels = (unsigned)v, ch_given = 1;
            break;
        case 'g':
            if (parse_num("--max-gaps", optarg, 1e18, &max_gaps))
                return 2;
            break;
        case 'm':
            if (parse_num("--max-gap-ms", optarg, 1e12, &max_gap_ms))
                return 2;
            break;
        case 'u':
            if (parse_num("--max-underruns", optarg, 1e18, &max_underruns))
                return 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc - 1 || (o.ref && !timing)) {
        usage(stderr);
        return 2;
    }
    if (fmt_given || rate_given || ch_given) {
        if (!(fmt_given && rate_given && ch_given)) {
            fprintf(stderr, "sndcheck: raw input needs all of --format, --rate, --channels\n");
            return 2;
        }
        o.raw.given = 1;
    }
    if (sndin_load(argv[optind], &o.raw, &in, err, sizeof(err)) < 0) {
        fprintf(stderr, "sndcheck: %s\n", err);
        return 2;
    }
    if (in.truncated) {
        rep_begin("truncated");
        rep_u64("bytes", in.truncated);
        rep_end();
    }
    for (size_t si = 0; si < in.nstreams; si++) {
        if (si)
            report_stream_gap(&in, si);
        report_stream(&in, si, &t);
    }
    if (timing ? timing_check(&in, &o, &t) < 0 : count_check(&in, &t) < 0) {
        sndin_free(&in);
        return 2;
    }
    size_t nstreams = in.nstreams;
    sndin_free(&in);

    int content = t.repeats || t.chan_errors || t.corrupt || t.format_errors || t.ref_mismatched ||
                  t.ref_extra;
    double longest = t.max_gap_ms > t.max_underrun_ms ? t.max_gap_ms : t.max_underrun_ms;
    int limits = (max_gaps >= 0 && (double)t.gaps > max_gaps) ||
                 (max_underruns >= 0 && (double)t.underruns > max_underruns) ||
                 (max_gap_ms >= 0 && longest > max_gap_ms);
    rep_begin("summary");
    rep_s("mode", timing ? "timing" : "counter");
    rep_u64("streams", nstreams);
    rep_u64("frames", t.frames);
    if (!timing) {
        rep_u64("runs", t.runs);
        rep_s("exact", t.inexact ? "no" : "yes");
    }
    rep_u64("gaps", t.gaps);
    rep_u64("missing", t.missing);
    rep_f("max_gap_ms", t.max_gap_ms);
    rep_u64("repeats", t.repeats);
    rep_u64("repeated", t.repeated);
    rep_u64("channel_errors", t.chan_errors);
    rep_u64("corrupt", t.corrupt);
    rep_u64("format_errors", t.format_errors);
    rep_u64("silence", t.silence);
    rep_u64("underruns", t.underruns);
    rep_u64("underrun_frames", t.underrun_frames);
    rep_f("max_underrun_ms", t.max_underrun_ms);
    rep_u64("xruns", t.xruns);
    if (timing && o.ref) {
        rep_u64("ref_matched", t.ref_matched);
        rep_u64("ref_differ", t.ref_mismatched);
        rep_u64("ref_extra", t.ref_extra);
    }
    if (!timing)
        rep_s("contiguous", !content && t.runs == 1 && !t.gaps && !t.inner_silence ? "yes" : "no");
    rep_s("result", content ? "content-error" : limits ? "limits-exceeded" : "ok");
    rep_end();
    return content ? 1 : limits ? 3 : 0;
}
