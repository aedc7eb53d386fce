/* snd-record - the full-system tier's recorder of the sound class, inside the
 * sound driver domain: it captures what reached the card (the capture end of
 * snd-aloop's loopback, whose playback end sndback plays to) and says on
 * stdout, the domain's console, which frames of the frame-counter signal
 * (tests/snd/framecode.h) arrived:
 *
 *   snd-record [-D PCM] [-i MS]     (default hw:Loopback,1,0, a line every 100 ms;
 *                                    lines come at period ends, 50 ms apart)
 *
 * The driver domain dies with its recorder and has no disk or network: its
 * console, which xenconsoled logs in dom0 and appends across restarts of a
 * domain of the same name, is the recording. It captures S32_LE, 2 channels,
 * 48000 Hz, 50 ms periods, with blocking reads. Every frame is checked: both
 * words valid, channel 0 then 1, the same counter in both, the counter one
 * more than the frame before. At 32 bits one word gives n mod 2^17; the side
 * bits of a block of 32 frames spell the block number, so within 63 frames of
 * its start a run of consecutive frames knows its absolute frame numbers, and
 * dom0 needs no clock to put the runs of several driver-domain instances in
 * order or to measure the gaps between them (tests/system/snd-runs, in
 * dom0, reads them: a run that starts at or before the end of the one before
 * it is a repeat). Lines, with the domain's uptime:
 *
 *   SNDREC ready pcm=P rate=48000 period=480 buffer=N uptime=U
 *   SNDREC begin first=N silent=S uptime=U    a run's first frame (S: silent
 *                                             frames captured since the last run)
 *   SNDREC at last=N run=R uptime=U           every -i ms of captured audio
 *   SNDREC end last=N run=R why=W uptime=U    silence, jump, bad or xrun ended it
 *                                             (block: a jump by a multiple of 2^17,
 *                                             placed to within 32 frames)
 *   SNDREC short run=R low=L uptime=U         a run too short to be numbered
 *   SNDREC bad frames=B w0=X w1=Y uptime=U    a frame that is neither signal nor
 *                                             silence (rate-limited)
 *   SNDREC xrun uptime=U                      the capture overran (frames lost here)
 *   SNDREC error ...                          the recorder failed (it retries)
 *   SNDREC idle silent=S uptime=U             every 10 s without signal
 */
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "framecode.h"

#define RATE     48000u
#define CHANNELS 2u
/* 50 ms periods: each wakeup of a PV domain costs much under software
 * emulation (at 10 ms, an idle recorder took a fifth of the emulated vcpu). */
#define PERIOD 2400u          /* 50 ms */
#define BUFFER (PERIOD * 40u) /* 2 s: a driver domain can go that long unscheduled */
#define MOD    (1u << 17)     /* fc_modulus(32) */

struct run {
    bool on;          /* in a run of consecutive frames */
    uint32_t low;     /* the last frame's n mod 2^17 */
    uint64_t len;     /* frames in the run */
    bool numbered;    /* its absolute frame numbers are known */
    uint64_t last;    /* the last frame's number, once numbered */
    uint32_t bits;    /* side bits of the current block so far */
    uint32_t have;    /* which of them */
    uint64_t silent;  /* non-signal frames since the last run ended */
    uint64_t bad;     /* frames neither signal nor silence, in all */
    uint64_t next_at; /* run length at which the next "at" line is due */
    uint64_t idle;    /* silent frames at which the next "idle" line is due */
};

static unsigned interval = RATE / 10;

static double uptime(void)
{
    struct timespec t;
    clock_gettime(CLOCK_BOOTTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void end_run(struct run *r, const char *why)
{
    if (!r->on)
        return;
    if (r->numbered)
        printf("SNDREC end last=%" PRIu64 " run=%" PRIu64 " why=%s uptime=%.3f\n", r->last, r->len,
               why, uptime());
    else
        printf("SNDREC short run=%" PRIu64 " low=%" PRIu32 " why=%s uptime=%.3f\n", r->len, r->low,
               why, uptime());
    r->on = false;
    r->silent = 0;
    r->idle = 10u * RATE;
}

/* One frame that carries the signal, n mod 2^17 = low, with its side bit. */
static void signal_frame(struct run *r, uint32_t low, unsigned side)
{
    if (r->on && low != ((r->low + 1) & (MOD - 1)))
        end_run(r, "jump");
    if (!r->on) {
        r->on = true;
        r->len = 1;
        r->numbered = false;
        r->bits = 0;
        r->have = 0;
    } else {
        r->len++;
    }
    r->low = low;
    if (r->numbered)
        r->last++;
    /* The block's side bits; a complete block names n exactly. */
    unsigned k = low & 31u;
    if (k == 0)
        r->bits = 0, r->have = 0;
    r->bits |= (uint32_t)side << k;
    r->have |= 1u << k;
    if (k == 31 && r->have == UINT32_MAX) {
        uint64_t n = (uint64_t)r->bits * 32u + 31u;
        if ((uint32_t)(n & (MOD - 1)) != low) {
            printf("SNDREC error block=%" PRIu32 " disagrees with low=%" PRIu32 " uptime=%.3f\n",
                   r->bits, low, uptime());
        } else if (!r->numbered) {
            r->numbered = true;
            r->last = n;
            printf("SNDREC begin first=%" PRIu64 " silent=%" PRIu64 " uptime=%.3f\n",
                   n - (r->len - 1), r->silent, uptime());
            r->next_at = r->len + interval;
        } else if (n != r->last) {
            /* A jump by a multiple of 2^17 frames, which the low counter
             * cannot see: a break within this block (32 frames). */
            printf("SNDREC end last=%" PRIu64 " run=%" PRIu64 " why=block uptime=%.3f\n",
                   r->last - 32u, r->len - 32u, uptime());
            printf("SNDREC begin first=%" PRIu64 " silent=0 uptime=%.3f\n", n - 31u, uptime());
            r->last = n;
            r->len = 32;
            r->next_at = r->len + interval;
        }
    }
    if (r->numbered && r->len >= r->next_at) {
        printf("SNDREC at last=%" PRIu64 " run=%" PRIu64 " uptime=%.3f\n", r->last, r->len,
               uptime());
        r->next_at = r->len + interval;
    }
}

static void other_frame(struct run *r, uint32_t w0, uint32_t w1)
{
    bool silence = w0 == 0 && w1 == 0;
    if (!silence) {
        if (r->bad < 8 || r->bad % 48000 == 0)
            printf("SNDREC bad frames=%" PRIu64 " w0=%08" PRIx32 " w1=%08" PRIx32 " uptime=%.3f\n",
                   r->bad + 1, w0, w1, uptime());
        r->bad++;
    }
    end_run(r, silence ? "silence" : "bad");
    r->silent++;
    if (r->silent >= r->idle) {
        printf("SNDREC idle silent=%" PRIu64 " uptime=%.3f\n", r->silent, uptime());
        r->idle += 10u * RATE;
    }
}

static snd_pcm_t *open_capture(const char *name, snd_pcm_uframes_t *buffer)
{
    snd_pcm_t *pcm;
    snd_pcm_hw_params_t *hw;
    int e = snd_pcm_open(&pcm, name, SND_PCM_STREAM_CAPTURE, 0);
    if (e < 0) {
        printf("SNDREC error open %s: %s uptime=%.3f\n", name, snd_strerror(e), uptime());
        return NULL;
    }
    snd_pcm_hw_params_alloca(&hw);
    snd_pcm_uframes_t period = PERIOD;
    *buffer = BUFFER;
    unsigned rate = RATE;
    const char *what = "hw_params_any";
    if ((e = snd_pcm_hw_params_any(pcm, hw)) < 0 ||
        (what = "access",
         e = snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0 ||
        (what = "format", e = snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S32_LE)) < 0 ||
        (what = "channels", e = snd_pcm_hw_params_set_channels(pcm, hw, CHANNELS)) < 0 ||
        (what = "rate", e = snd_pcm_hw_params_set_rate(pcm, hw, rate, 0)) < 0 ||
        (what = "period", e = snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, 0)) < 0 ||
        (what = "buffer", e = snd_pcm_hw_params_set_buffer_size_near(pcm, hw, buffer)) < 0 ||
        (what = "hw_params", e = snd_pcm_hw_params(pcm, hw)) < 0 ||
        (what = "start", e = snd_pcm_start(pcm)) < 0) {
        printf("SNDREC error %s on %s: %s uptime=%.3f\n", what, name, snd_strerror(e), uptime());
        snd_pcm_close(pcm);
        return NULL;
    }
    printf("SNDREC ready pcm=%s rate=%u period=%lu buffer=%lu uptime=%.3f\n", name, rate,
           (unsigned long)period, (unsigned long)*buffer, uptime());
    return pcm;
}

int main(int argc, char **argv)
{
    const char *name = "hw:Loopback,1,0";
    int o;
    while ((o = getopt(argc, argv, "D:i:")) != -1) {
        switch (o) {
        case 'D':
            name = optarg;
            break;
        case 'i': {
            long ms = strtol(optarg, NULL, 10);
            if (ms < 10 || ms > 10000) {
                fprintf(stderr, "snd-record: -i %s: want 10..10000 ms\n", optarg);
                return 2;
            }
            interval = (unsigned)(RATE / 1000u * (unsigned long)ms);
            break;
        }
        default:
            fprintf(stderr, "usage: snd-record [-D PCM] [-i MS]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    static int32_t buf[PERIOD * CHANNELS];
    struct run r = {.idle = 10u * RATE};
    for (;;) {
        snd_pcm_uframes_t buffer;
        snd_pcm_t *pcm = open_capture(name, &buffer);
        if (!pcm) {
            sleep(1); /* the module may still be loading */
            continue;
        }
        for (;;) {
            snd_pcm_sframes_t n = snd_pcm_readi(pcm, buf, PERIOD);
            if (n == -EPIPE) {
                printf("SNDREC xrun uptime=%.3f\n", uptime());
                end_run(&r, "xrun");
                if (snd_pcm_prepare(pcm) < 0 || snd_pcm_start(pcm) < 0)
                    break;
                continue;
            }
            if (n < 0) {
                printf("SNDREC error read: %s uptime=%.3f\n", snd_strerror((int)n), uptime());
                if (snd_pcm_recover(pcm, (int)n, 1) < 0)
                    break;
                continue;
            }
            for (snd_pcm_sframes_t i = 0; i < n; i++) {
                uint32_t w0 = (uint32_t)buf[2 * i], w1 = (uint32_t)buf[2 * i + 1];
                struct fc_sample a = fc_decode(w0, 32), b = fc_decode(w1, 32);
                if (a.valid && b.valid && a.chan == 0 && b.chan == 1 && a.low == b.low &&
                    a.side == b.side)
                    signal_frame(&r, a.low, a.side);
                else
                    other_frame(&r, w0, w1);
            }
        }
        end_run(&r, "xrun");
        snd_pcm_close(pcm);
        sleep(1);
    }
}
