/* sndlevel - the audio level of what the clocked test PCM played, over time:
 * the series behind the application table's sound plot (tests/campaign).
 *
 *   sndlevel [--window-ms MS] [--until-s S] FILE
 *
 * FILE is a clocked-PCM recording (usck.h): every chunk carries the time its
 * first frame played. The recording's span, from its first frame, is cut into
 * windows of MS (default 50); for each, one line "T_S RMS": the window's start
 * in seconds and the RMS of every sample that played in it, full scale 1.
 * A window in which nothing played - no stream open, the card's backend dead -
 * is 0, and so is every window after the last frame up to --until-s, so that
 * a recording that stops is seen to stop. Exit 2 for bad usage or a file that
 * is not a timed recording.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sndin.h"

/* 32-bit left-aligned sample as a fraction of full scale. */
static double sample_level(enum snd_fmt f, const unsigned char *p)
{
    return (double)(int32_t)snd_get_sample(f, p) / 2147483648.0;
}

int main(int argc, char **argv)
{
    double window_ms = 50, until_s = 0;
    static const struct option opts[] = {{"window-ms", required_argument, 0, 'w'},
                                         {"until-s", required_argument, 0, 'u'},
                                         {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'w':
            window_ms = strtod(optarg, &end);
            if (*end || !(window_ms >= 1 && window_ms <= 10000)) {
                fprintf(stderr, "sndlevel: --window-ms takes 1..10000\n");
                return 2;
            }
            break;
        case 'u':
            until_s = strtod(optarg, &end);
            if (*end || !(until_s >= 0 && until_s <= 86400)) {
                fprintf(stderr, "sndlevel: --until-s takes 0..86400\n");
                return 2;
            }
            break;
        default:
            fprintf(stderr, "usage: sndlevel [--window-ms MS] [--until-s S] FILE\n");
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: sndlevel [--window-ms MS] [--until-s S] FILE\n");
        return 2;
    }
    struct sndin in;
    char err[256];
    if (sndin_load(argv[optind], NULL, &in, err, sizeof err) < 0) {
        fprintf(stderr, "sndlevel: %s: %s\n", argv[optind], err);
        return 2;
    }
    if (!in.timed) {
        fprintf(stderr, "sndlevel: %s: not a clocked-PCM recording (no times)\n", argv[optind]);
        sndin_free(&in);
        return 2;
    }
    /* The span: from the first frame played to the last (or --until-s). */
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (size_t s = 0; s < in.nstreams; s++) {
        const struct sndin_stream *st = &in.streams[s];
        for (size_t k = 0; k < st->nchunks; k++) {
            const struct sndin_chunk *ch = &st->chunks[k];
            if (!ch->frames)
                continue;
            uint64_t end = ch->t_ns + (uint64_t)ch->frames * 1000000000u / st->rate;
            t0 = ch->t_ns < t0 ? ch->t_ns : t0;
            t1 = end > t1 ? end : t1;
        }
    }
    if (t0 == UINT64_MAX) {
        t0 = 0;
        t1 = 0;
    }
    uint64_t win_ns = (uint64_t)(window_ms * 1e6);
    size_t n = (size_t)((t1 - t0) / win_ns) + 1;
    size_t n_until = (size_t)(until_s * 1e9 / (double)win_ns);
    if (n_until > n)
        n = n_until;
    double *sum = calloc(n, sizeof *sum);
    uint64_t *cnt = calloc(n, sizeof *cnt);
    if (!sum || !cnt) {
        fprintf(stderr, "sndlevel: out of memory for %zu windows\n", n);
        return 2;
    }
    for (size_t s = 0; s < in.nstreams; s++) {
        const struct sndin_stream *st = &in.streams[s];
        unsigned fb = sndin_frame_bytes(st), sb = snd_fmt_bytes(st->fmt);
        for (size_t k = 0; k < st->nchunks; k++) {
            const struct sndin_chunk *ch = &st->chunks[k];
            for (uint32_t i = 0; i < ch->frames; i++) {
                uint64_t t = ch->t_ns + (uint64_t)i * 1000000000u / st->rate;
                if (t < t0 || (size_t)((t - t0) / win_ns) >= n)
                    continue;
                size_t w = (size_t)((t - t0) / win_ns);
                const unsigned char *p = in.buf + ch->off + (size_t)i * fb;
                for (unsigned c2 = 0; c2 < st->channels; c2++) {
                    double v = sample_level(st->fmt, p + c2 * sb);
                    sum[w] += v * v;
                    cnt[w]++;
                }
            }
        }
    }
    for (size_t w = 0; w < n; w++)
        printf("%.3f %.4f\n", (double)w * window_ms / 1000.0,
               cnt[w] ? sqrt(sum[w] / (double)cnt[w]) : 0.0);
    free(sum);
    free(cnt);
    sndin_free(&in);
    return 0;
}
