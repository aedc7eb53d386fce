/* sndgen - write test audio that carries the frame-counter signal (framecode.h).
 *
 *   sndgen [-r RATE] [-f FORMAT] [-c CHANNELS] (-d SECONDS | -n FRAMES) [--start N]
 *          [--raw] [--cut AT:N] [--repeat AT:N] [--swap AT:N] -o FILE|-
 *
 * Writes frames start .. start+FRAMES-1 as a WAV file (default) or raw. The
 * edits make known faults for sndcheck to find: --cut drops frames AT..AT+N-1,
 * --repeat plays AT..AT+N-1 twice, --swap exchanges channels 0 and 1 in
 * AT..AT+N-1. Each may be given up to 16 times.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framecode.h"
#include "wav.h"

#define MAX_EDITS 16

struct range {
    uint64_t at, n;
};

struct edits {
    struct range cut[MAX_EDITS], rep[MAX_EDITS], swap[MAX_EDITS];
    int ncut, nrep, nswap;
};

static void usage(FILE *f)
{
    fputs("usage: sndgen [-r RATE] [-f S16_LE|S24_LE|S32_LE] [-c CHANNELS] (-d SECONDS | -n "
          "FRAMES)\n"
          "              [--start N] [--raw] [--cut AT:N] [--repeat AT:N] [--swap AT:N] -o "
          "FILE|-\n",
          f);
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        return -1;
    *v = x;
    return 0;
}

static int parse_range(const char *opt, const char *s, struct range *r, int *count)
{
    char buf[64];
    char *colon;
    if (*count >= MAX_EDITS || strlen(s) >= sizeof(buf)) {
        fprintf(stderr, "sndgen: --%s: too many or too long\n", opt);
        return -1;
    }
    strcpy(buf, s);
    colon = strchr(buf, ':');
    if (!colon) {
        fprintf(stderr, "sndgen: --%s %s: want AT:N\n", opt, s);
        return -1;
    }
    *colon = '\0';
    if (parse_u64(buf, &r[*count].at) || parse_u64(colon + 1, &r[*count].n) || r[*count].n == 0) {
        fprintf(stderr, "sndgen: --%s %s: want AT:N, N > 0\n", opt, s);
        return -1;
    }
    (*count)++;
    return 0;
}

static int in_ranges(const struct range *r, int n, uint64_t x)
{
    for (int i = 0; i < n; i++)
        if (x >= r[i].at && x < r[i].at + r[i].n)
            return 1;
    return 0;
}

/* Emits frame n (or, with out NULL, only counts it). */
static int emit(FILE *out, const struct edits *e, enum snd_fmt f, unsigned ch, uint64_t n,
                uint64_t *count)
{
    unsigned char frame[8 * 4];
    unsigned sb = snd_fmt_bytes(f);
    fc_fill(f, ch, (uint32_t)n, 1, frame);
    if (ch >= 2 && in_ranges(e->swap, e->nswap, n)) {
        unsigned char tmp[4];
        memcpy(tmp, frame, sb);
        memcpy(frame, frame + sb, sb);
        memcpy(frame + sb, tmp, sb);
    }
    (*count)++;
    return out && fwrite(frame, sb * ch, 1, out) != 1 ? -1 : 0;
}

/* The whole stream, edits applied; out NULL counts the frames only. */
static int generate(FILE *out, const struct edits *e, enum snd_fmt f, unsigned ch, uint64_t start,
                    uint64_t frames, uint64_t *count)
{
    *count = 0;
    for (uint64_t n = start; n < start + frames; n++) {
        if (in_ranges(e->cut, e->ncut, n))
            continue;
        if (emit(out, e, f, ch, n, count) < 0)
            return -1;
        for (int i = 0; i < e->nrep; i++)
            if (n == e->rep[i].at + e->rep[i].n - 1)
                for (uint64_t k = e->rep[i].at; k <= n; k++)
                    if (emit(out, e, f, ch, k, count) < 0)
                        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"rate", required_argument, NULL, 'r'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"channels", required_argument, NULL, 'c'},
                                             {"seconds", required_argument, NULL, 'd'},
                                             {"frames", required_argument, NULL, 'n'},
                                             {"start", required_argument, NULL, 's'},
                                             {"raw", no_argument, NULL, 'R'},
                                             {"cut", required_argument, NULL, 'C'},
                                             {"repeat", required_argument, NULL, 'P'},
                                             {"swap", required_argument, NULL, 'S'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    struct edits e = {0};
    uint64_t rate = 48000, ch = 2, frames = 0, start = 0;
    double secs = -1;
    int fmt = SND_FMT_S16_LE, raw = 0, opt;
    const char *path = NULL;
    char *end;

    while ((opt = getopt_long(argc, argv, "r:f:c:d:n:o:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'r':
            if (parse_u64(optarg, &rate) || rate < 1000 || rate > 768000) {
                fprintf(stderr, "sndgen: bad rate %s (1000-768000)\n", optarg);
                return 2;
            }
            break;
        case 'f':
            if ((fmt = snd_fmt_parse(optarg)) < 0) {
                fprintf(stderr, "sndgen: bad format %s (S16_LE, S24_LE or S32_LE)\n", optarg);
                return 2;
            }
            break;
        case 'c':
            if (parse_u64(optarg, &ch) || ch < 1 || ch > 8) {
                fprintf(stderr, "sndgen: bad channel count %s (1-8)\n", optarg);
                return 2;
            }
            break;
        case 'd':
            secs = strtod(optarg, &end);
            if (end == optarg || *end || !(secs > 0) || secs > 86400) {
                fprintf(stderr, "sndgen: bad duration %s\n", optarg);
                return 2;
            }
            break;
        case 'n':
            if (parse_u64(optarg, &frames) || frames == 0) {
                fprintf(stderr, "sndgen: bad frame count %s\n", optarg);
                return 2;
            }
            break;
        case 's':
            if (parse_u64(optarg, &start) || start > UINT32_MAX) {
                fprintf(stderr, "sndgen: bad start %s\n", optarg);
                return 2;
            }
            break;
        case 'R':
            raw = 1;
            break;
        case 'C':
            if (parse_range("cut", optarg, e.cut, &e.ncut))
                return 2;
            break;
        case 'P':
            if (parse_range("repeat", optarg, e.rep, &e.nrep))
                return 2;
            break;
        case 'S':
            if (parse_range("swap", optarg, e.swap, &e.nswap))
                return 2;
            break;
        case 'o':
            path = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc || !path || (secs < 0) == (frames == 0)) {
        usage(stderr);
        return 2;
    }
    if (secs > 0)
        frames = (uint64_t)(secs * (double)rate + 0.5);
    if (start + frames > (uint64_t)UINT32_MAX + 1) {
        fprintf(stderr, "sndgen: frame numbers past 2^32\n");
        return 2;
    }

    FILE *out = strcmp(path, "-") ? fopen(path, "wb") : stdout;
    if (!out) {
        fprintf(stderr, "sndgen: %s: %s\n", path, strerror(errno));
        return 1;
    }
    uint64_t count;
    if (!raw) {
        generate(NULL, &e, fmt, (unsigned)ch, start, frames, &count);
        unsigned char hdr[80];
        size_t hl = wav_header(hdr, fmt, (unsigned)ch, (unsigned)rate, count);
        if (fwrite(hdr, hl, 1, out) != 1)
            goto werr;
    }
    if (generate(out, &e, fmt, (unsigned)ch, start, frames, &count) < 0)
        goto werr;
    if (fflush(out) || (out != stdout && fclose(out)))
        goto werr;
    return 0;
werr:
    fprintf(stderr, "sndgen: writing %s: %s\n", path, strerror(errno));
    return 1;
}
