/* sndplay - play the frame-counter signal through an ALSA PCM with the calls
 * the command-line players do not make, to test the clocked PCM with them.
 *
 *   sndplay -D PCM [-r RATE] [-f FORMAT] [-c CH] -d SECONDS
 *           [--pause-at S --pause-for S] [--noninterleaved] [--nonblock]
 *
 * Plays frames 0 .. RATE*SECONDS-1 in periods; with --pause-at it pauses
 * (snd_pcm_pause) once that many seconds of audio are written, waits
 * --pause-for seconds and resumes; --noninterleaved writes with
 * snd_pcm_writen; --nonblock drives the PCM with poll() on its descriptors.
 * Ends with snd_pcm_drain. Exit 0, or 1 naming the call that failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <alsa/asoundlib.h>

#include "framecode.h"

static const snd_pcm_format_t alsa_fmt[SND_FMT_COUNT] = {
    SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_S24_LE, SND_PCM_FORMAT_S32_LE};

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int err_ = (call);                                                                         \
        if (err_ < 0) {                                                                            \
            fprintf(stderr, "sndplay: %s: %s\n", #call, snd_strerror(err_));                       \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Waits until the PCM can take frames (nonblocking mode). */
static int wait_writable(snd_pcm_t *pcm)
{
    struct pollfd pfd[4];
    unsigned short rev = 0;
    int n = snd_pcm_poll_descriptors(pcm, pfd, 4);
    if (n < 0)
        return n;
    while (!(rev & POLLOUT)) {
        if (poll(pfd, (nfds_t)n, 5000) <= 0)
            return -ETIMEDOUT;
        int err = snd_pcm_poll_descriptors_revents(pcm, pfd, (unsigned)n, &rev);
        if (err < 0)
            return err;
        if (rev & POLLERR)
            return -EPIPE;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"pause-at", required_argument, NULL, 'a'},
                                             {"pause-for", required_argument, NULL, 'p'},
                                             {"noninterleaved", no_argument, NULL, 'N'},
                                             {"nonblock", no_argument, NULL, 'B'},
                                             {NULL, 0, NULL, 0}};
    const char *dev = NULL;
    unsigned rate = 48000, ch = 2;
    int fmt = SND_FMT_S16_LE, nonint = 0, nonblock = 0, opt;
    double secs = 0, pause_at = -1, pause_for = 0;
    snd_pcm_t *pcm;
    snd_pcm_uframes_t period = 1024, buffer = 4096;

    while ((opt = getopt_long(argc, argv, "D:r:f:c:d:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'D':
            dev = optarg;
            break;
        case 'r':
            rate = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'f':
            fmt = snd_fmt_parse(optarg);
            break;
        case 'c':
            ch = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'd':
            secs = strtod(optarg, NULL);
            break;
        case 'a':
            pause_at = strtod(optarg, NULL);
            break;
        case 'p':
            pause_for = strtod(optarg, NULL);
            break;
        case 'N':
            nonint = 1;
            break;
        case 'B':
            nonblock = 1;
            break;
        default:
            return 2;
        }
    }
    if (!dev || fmt < 0 || ch < 1 || ch > 8 || rate < 8000 || !(secs > 0)) {
        fprintf(stderr, "usage: sndplay -D PCM [-r RATE] [-f FORMAT] [-c CH] -d SECONDS "
                        "[--pause-at S --pause-for S] [--noninterleaved] [--nonblock]\n");
        return 2;
    }

    CHECK(snd_pcm_open(&pcm, dev, SND_PCM_STREAM_PLAYBACK, nonblock ? SND_PCM_NONBLOCK : 0));
    snd_pcm_hw_params_t *hw;
    snd_pcm_hw_params_alloca(&hw);
    CHECK(snd_pcm_hw_params_any(pcm, hw));
    CHECK(snd_pcm_hw_params_set_access(
        pcm, hw, nonint ? SND_PCM_ACCESS_RW_NONINTERLEAVED : SND_PCM_ACCESS_RW_INTERLEAVED));
    CHECK(snd_pcm_hw_params_set_format(pcm, hw, alsa_fmt[fmt]));
    CHECK(snd_pcm_hw_params_set_channels(pcm, hw, ch));
    CHECK(snd_pcm_hw_params_set_rate(pcm, hw, rate, 0));
    CHECK(snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, NULL));
    CHECK(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer));
    CHECK(snd_pcm_hw_params(pcm, hw));

    unsigned sb = snd_fmt_bytes(fmt);
    uint64_t total = (uint64_t)(secs * rate), pause_frame = (uint64_t)(pause_at * rate);
    unsigned char *il = malloc(period * ch * sb), *planes = malloc(period * ch * sb);
    void *bufs[8];
    if (!il || !planes)
        return 1;
    for (unsigned c = 0; c < ch; c++)
        bufs[c] = planes + c * period * sb;

    int paused = pause_at < 0;
    for (uint64_t n = 0; n < total;) {
        snd_pcm_uframes_t want = total - n < period ? total - n : period;
        snd_pcm_sframes_t w;
        if (!paused && n >= pause_frame) {
            CHECK(snd_pcm_pause(pcm, 1));
            sleep_s(pause_for);
            CHECK(snd_pcm_pause(pcm, 0));
            paused = 1;
        }
        fc_fill(fmt, ch, (uint32_t)n, want, il);
        if (nonint) {
            for (snd_pcm_uframes_t i = 0; i < want; i++)
                for (unsigned c = 0; c < ch; c++)
                    memcpy(planes + (c * period + i) * sb, il + (i * ch + c) * sb, sb);
        }
        if (nonblock)
            CHECK(wait_writable(pcm));
        w = nonint ? snd_pcm_writen(pcm, bufs, want) : snd_pcm_writei(pcm, il, want);
        if (w == -EAGAIN)
            continue;
        CHECK((int)(w < 0 ? w : 0));
        n += (uint64_t)w;
    }
    if (nonblock)
        CHECK(snd_pcm_nonblock(pcm, 0));
    CHECK(snd_pcm_drain(pcm));
    CHECK(snd_pcm_close(pcm));
    free(il);
    free(planes);
    snd_config_update_free_global(); /* alsa-lib's configuration cache, for LSan */
    return 0;
}
