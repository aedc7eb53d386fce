/* sndcount.c - sndcheck's frame-counter analysis: split the frames into runs
 * of consecutive frame numbers, name each run's numbers from its side bits
 * (framecode.h), and report what lies between runs (gaps, repeats) and the
 * frames that are silent, corrupt or carry their channels in the wrong order. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framecode.h"
#include "sndcheck.h"
#include "sndreport.h"

struct run {
    size_t stream;
    uint64_t count, t_first, t_last;
    uint32_t low0, last_low, mod;
    int resolved, inconsistent;
    int approx_start; /* split where blocks disagreed: placed to within 32 frames */
    uint64_t n0;
    uint32_t acc; /* side bits of the block being collected */
    int acc_bits;
};

/* A stretch of frames of one kind (silent, corrupt, channels out of order). */
struct span {
    const char *kind;
    size_t stream, run; /* run: the run it lies in (channel errors), or SIZE_MAX */
    uint64_t count, off, t_first, t_last;
    char detail[48];
};

struct state {
    struct run *runs;
    size_t nruns, cap;
    struct span *spans;
    size_t nspans, scap;
    struct span open; /* the span being extended; kind NULL when none */
    int in_run;
};

static int push_run(struct state *st, const struct run *r)
{
    if (st->nruns == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 64;
        struct run *n = realloc(st->runs, cap * sizeof(*n));
        if (!n)
            return -1;
        st->runs = n, st->cap = cap;
    }
    st->runs[st->nruns++] = *r;
    return 0;
}

static void close_span(struct state *st)
{
    if (!st->open.kind)
        return;
    if (st->nspans == st->scap) {
        size_t cap = st->scap ? st->scap * 2 : 64;
        struct span *n = realloc(st->spans, cap * sizeof(*n));
        if (!n) {
            st->open.kind = NULL; /* out of memory: the span goes unreported */
            return;
        }
        st->spans = n, st->scap = cap;
    }
    st->spans[st->nspans++] = st->open;
    st->open.kind = NULL;
}

static void note_span(struct state *st, const char *kind, size_t stream, size_t run, uint64_t off,
                      uint64_t t, const char *detail)
{
    if (st->open.kind && (st->open.kind != kind || st->open.stream != stream))
        close_span(st);
    if (!st->open.kind) {
        memset(&st->open, 0, sizeof(st->open));
        st->open.kind = kind, st->open.stream = stream, st->open.run = run;
        st->open.off = off, st->open.t_first = t;
        snprintf(st->open.detail, sizeof(st->open.detail), "%s", detail ? detail : "");
    }
    st->open.count++;
    st->open.t_last = t;
}

/* Collect side bits: positions 0..31 of a block in a row give the block
 * number. Returns 1 when a block names other frame numbers than the run's
 * earlier blocks did: frames were lost or repeated in a multiple of the low
 * counter's modulus (a period of 512 or 1024 frames, say), which the low
 * counter alone cannot see. */
static int side_bit(struct run *r, uint32_t low, unsigned side)
{
    unsigned p = low & 31;
    if (p == 0)
        r->acc = 0, r->acc_bits = 0;
    if (r->acc_bits != (int)p)
        return 0; /* the run began inside this block */
    r->acc |= (uint32_t)side << p;
    if (++r->acc_bits < 32)
        return 0;
    r->acc_bits = 0;
    int64_t n0 = (int64_t)r->acc * 32 + 31 - (int64_t)(r->count - 1);
    if (r->resolved)
        return n0 != (int64_t)r->n0;
    if (n0 < 0 || (uint64_t)n0 % r->mod != r->low0)
        r->inconsistent = 1;
    else
        r->resolved = 1, r->n0 = (uint64_t)n0;
    return 0;
}

/* Split the run before the block that named other numbers: the jump lies in
 * the 32 frames of that block or just before it, so the new run's start, and
 * the gap or repeat reported there, is placed to within a block; its length
 * in frames is exact. */
static int split_run(struct state *st, struct run *r, uint64_t ft, unsigned rate)
{
    struct run nr = *r;
    uint64_t keep = r->count - 32, block_ns = 32ull * 1000000000u / rate;
    r->count = keep;
    r->last_low = (r->low0 + (uint32_t)(keep - 1)) % r->mod;
    r->t_last = ft > block_ns ? ft - block_ns : 0;
    if (push_run(st, r) < 0)
        return -1;
    nr.low0 = (r->low0 + (uint32_t)keep) % r->mod;
    nr.count = 32;
    nr.resolved = nr.inconsistent = 0;
    nr.n0 = 0;
    nr.t_first = r->t_last + 1000000000u / rate;
    nr.approx_start = 1;
    *r = nr;
    return 0;
}

/* One frame: 0 silence, 1 good, -1 corrupt; *chan_err when channels are out of order. */
static int decode_frame(const struct sndin_stream *s, const unsigned char *p, uint32_t *low,
                        unsigned *side, int *chan_err, char *got, size_t gotlen)
{
    unsigned sb = snd_fmt_bytes(s->fmt), bits = snd_fmt_bits(s->fmt);
    struct fc_sample first = {0};
    size_t gl = 0;
    if (frame_is_zero(p, sb * s->channels))
        return 0;
    *chan_err = 0;
    for (unsigned c = 0; c < s->channels; c++) {
        struct fc_sample x = fc_decode(snd_get_sample(s->fmt, p + c * sb), bits);
        if (!x.valid)
            return -1;
        if (c == 0)
            first = x;
        else if (x.low != first.low || x.side != first.side)
            return -1;
        if (x.chan != c)
            *chan_err = 1;
        if (gl + 3 < gotlen)
            gl += (size_t)snprintf(got + gl, gotlen - gl, "%s%u", c ? "," : "", x.chan);
    }
    *low = first.low, *side = first.side;
    return 1;
}

static int end_run(struct state *st, struct run *r)
{
    if (!st->in_run)
        return 0;
    st->in_run = 0;
    return push_run(st, r);
}

/* Does another format or channel count decode this stream's first frames? */
static void guess_format(const struct sndin *in, size_t si)
{
    const struct sndin_stream *s = &in->streams[si];
    size_t bytes = 0, best_ok = 0;
    const unsigned char *p = NULL;
    int best_f = -1;
    unsigned best_c = 0;
    for (size_t k = 0; k < s->nchunks && !bytes; k++)
        if (s->chunks[k].frames)
            p = in->buf + s->chunks[k].off,
            bytes = (size_t)s->chunks[k].frames * sndin_frame_bytes(s);
    if (bytes > 65536)
        bytes = 65536;
    for (int f = 0; f < SND_FMT_COUNT; f++)
        for (unsigned ch = 1; ch <= 8; ch++) {
            struct sndin_stream g = *s;
            g.fmt = f, g.channels = ch;
            size_t fb = sndin_frame_bytes(&g), n = bytes / fb, ok = 0;
            for (size_t i = 0; i < n; i++) {
                uint32_t low;
                unsigned side;
                int ce;
                char got[32];
                ok += decode_frame(&g, p + i * fb, &low, &side, &ce, got, sizeof(got)) == 1 && !ce;
            }
            if (n >= 64 && ok * 10 >= n * 9 && ok > best_ok)
                best_ok = ok, best_f = f, best_c = ch;
        }
    rep_begin("format-error");
    rep_u64("stream", si);
    rep_s("declared", snd_fmt_name(s->fmt));
    rep_u64("channels", s->channels);
    if (best_f >= 0) {
        rep_s("looks_like", snd_fmt_name(best_f));
        rep_u64("looks_like_channels", best_c);
    } else {
        rep_s("looks_like", "unknown");
    }
    rep_end();
}

static void report_runs(const struct sndin *in, struct state *st, struct check_tally *t,
                        uint64_t t0)
{
    uint64_t expected = 0;
    for (size_t i = 0; i < st->nruns; i++) {
        struct run *r = &st->runs[i];
        const struct sndin_stream *s = &in->streams[r->stream];
        if (!r->resolved) {
            t->inexact = 1;
            r->n0 = i ? expected + (r->low0 - expected % r->mod + r->mod) % r->mod : r->low0;
        }
        if (r->inconsistent)
            t->corrupt += r->count;
        if (i) {
            const struct run *p = &st->runs[i - 1];
            int64_t delta = (int64_t)(r->n0 - expected);
            double hole_ms = ((double)r->t_first - (double)p->t_last) / 1e6 - 1000.0 / s->rate;
            if (hole_ms > -0.001 && hole_ms < 0.001)
                hole_ms = 0; /* frame times are whole ns */
            if (delta > 0) {
                t->gaps++, t->missing += (uint64_t)delta;
                if (hole_ms > t->max_gap_ms)
                    t->max_gap_ms = hole_ms;
                rep_begin("gap");
                rep_u64("after", expected - 1);
                rep_u64("missing", (uint64_t)delta);
                rep_f("stream_ms", (double)delta * 1000.0 / s->rate);
                rep_f("wall_ms", hole_ms);
            } else if (delta < 0) {
                t->repeats++, t->repeated += (uint64_t)-delta;
                rep_begin("repeat");
                rep_u64("at", r->n0);
                rep_u64("frames", (uint64_t)-delta);
                rep_f("wall_ms", hole_ms);
            } else {
                rep_begin("resume");
                rep_u64("at", r->n0);
                rep_f("wall_ms", hole_ms);
            }
            rep_u64("stream", r->stream);
            rep_s("exact", r->resolved ? "yes" : "no");
            if (r->approx_start)
                rep_s("where", "within-32-frames");
            rep_end();
        }
        rep_begin("run");
        rep_u64("first", r->n0);
        rep_u64("last", r->n0 + r->count - 1);
        rep_u64("frames", r->count);
        rep_u64("stream", r->stream);
        rep_f("t_ms", ((double)r->t_first - (double)t0) / 1e6);
        rep_s("exact", r->resolved ? (r->inconsistent ? "inconsistent" : "yes") : "no");
        rep_end();
        expected = r->n0 + r->count;
    }
}

static void report_spans(const struct sndin *in, struct state *st, struct check_tally *t)
{
    for (size_t i = 0; i < st->nspans; i++) {
        const struct span *sp = &st->spans[i];
        const struct sndin_stream *s = &in->streams[sp->stream];
        rep_begin(sp->kind);
        /* at: the first frame's number, or for frames that carry none, the
         * number the next frame of the last run would have had */
        rep_u64("at", sp->run < st->nruns ? st->runs[sp->run].n0 + sp->off : 0);
        rep_u64("frames", sp->count);
        rep_f("ms", (double)sp->count * 1000.0 / s->rate);
        rep_u64("stream", sp->stream);
        if (sp->detail[0])
            rep_s("channels", sp->detail);
        rep_end();
        /* Silence before the first run or after the last (aplay pads its last
         * period with it) does not break the content's continuity. */
        int edge =
            sp->run == SIZE_MAX || (sp->run == st->nruns - 1 && sp->off == st->runs[sp->run].count);
        if (!strcmp(sp->kind, "silence") && !edge)
            t->inner_silence += sp->count;
        if (!strcmp(sp->kind, "channel-order"))
            t->chan_errors += sp->count;
        else if (!strcmp(sp->kind, "corrupt"))
            t->corrupt += sp->count;
    }
}

int count_check(const struct sndin *in, struct check_tally *t)
{
    struct state st = {0};
    struct run r = {0};
    uint64_t t0 = 0;
    int have_t0 = 0;

    for (size_t si = 0; si < in->nstreams; si++) {
        const struct sndin_stream *s = &in->streams[si];
        unsigned fb = sndin_frame_bytes(s);
        uint64_t good = 0, bad = 0;
        end_run(&st, &r);
        for (size_t ci = 0; ci < s->nchunks; ci++) {
            const struct sndin_chunk *c = &s->chunks[ci];
            for (uint64_t i = 0; i < c->frames; i++) {
                const unsigned char *p = in->buf + c->off + i * fb;
                uint64_t ft = frame_time(in, s, c, i);
                uint32_t low = 0;
                unsigned side = 0;
                int ce = 0;
                char got[32] = "";
                int k = decode_frame(s, p, &low, &side, &ce, got, sizeof(got));
                if (!have_t0)
                    t0 = ft, have_t0 = 1;
                t->frames++;
                if (k <= 0) {
                    /* It sits where the frame after the last run would be. */
                    size_t ridx = st.in_run ? st.nruns : st.nruns ? st.nruns - 1 : SIZE_MAX;
                    uint64_t off = st.in_run ? r.count : st.nruns ? st.runs[ridx].count : 0;
                    if (k == 0)
                        t->silence++;
                    else
                        bad++;
                    end_run(&st, &r);
                    note_span(&st, k == 0 ? "silence" : "corrupt", si, ridx, off, ft, NULL);
                    continue;
                }
                good++;
                if (st.open.kind && (!ce || strcmp(st.open.kind, "channel-order")))
                    close_span(&st);
                if (!st.in_run || low != (r.last_low + 1) % r.mod) {
                    end_run(&st, &r);
                    memset(&r, 0, sizeof(r));
                    r.stream = si, r.low0 = low, r.mod = fc_modulus(snd_fmt_bits(s->fmt));
                    r.t_first = ft;
                    st.in_run = 1;
                }
                r.count++;
                r.last_low = low;
                r.t_last = ft;
                if (side_bit(&r, low, side) && split_run(&st, &r, ft, s->rate) < 0)
                    return -1;
                if (ce)
                    note_span(&st, "channel-order", si, st.nruns, r.count - 1, ft, got);
            }
        }
        close_span(&st);
        if (bad && bad >= good) {
            t->format_errors++;
            guess_format(in, si);
        }
    }
    end_run(&st, &r);
    close_span(&st);
    report_runs(in, &st, t, t0);
    report_spans(in, &st, t);
    t->runs = st.nruns;
    free(st.runs);
    free(st.spans);
    return 0;
}
