/* usclock.c - the clocked test PCM: an ALSA ioplug plugin that plays and
 * captures at the stream's real rate.
 *
 * ALSA's null PCM has no clock; this one has. Its clock is CLOCK_MONOTONIC:
 * tick k falls at start + k periods (pauses excluded), a timerfd armed for the
 * next tick is the poll fd, and each tick moves the hardware pointer one
 * period. Ticks are processed when ALSA asks for the pointer (every write,
 * read, avail and poll wakeup does), always before new data is transferred,
 * so a late caller sees exactly what a DMA engine would have: the periods the
 * clock consumed while it was away, short ones where data ran out. Between
 * ticks the timerfd is also armed to fire at once when the application can
 * move avail_min frames, so that the fd polls as a sound card's does.
 *
 * Playback: transfers are copied into the plugin's own ring of buffer_size
 * frames; each tick takes up to one period from it and appends it to the
 * recording (usck.h), with the tick's time. When data runs out while running,
 * the clock still runs a whole period (an underrun: a short PERIOD record);
 * once the free space reaches stop_threshold the pointer reports an xrun, as
 * hardware does. Capture: each tick writes one period of the source (the
 * frame counter of framecode.h, numbered by the frames clocked since open, so
 * an overrun shows as a gap; or silence; or a raw file) into the ring.
 *
 * Configuration: usclock_conf.h. Not done: rewind/forward (the ring does not
 * follow a moved application pointer).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>

#include "framecode.h"
#include "pcm_clock.h"
#include "usck.h"
#include "usclock_conf.h"
#include "usclock_rec.h"

#define USCLOCK_MAX_CHANNELS 8

struct usclock {
    snd_pcm_ioplug_t io;
    struct usclock_conf conf;
    struct pcm_clock clk; /* the clock; its timerfd, armed for the next tick, is the poll fd */
    int rec_fd;           /* the recording, or -1 */
    int src_fd;           /* the capture file, or -1 */
    int rec_failed;
    enum snd_fmt fmt;
    unsigned sample_bytes, frame_bytes;
    unsigned char *ring; /* buffer_size frames, interleaved */
    snd_pcm_uframes_t ring_frames;
    snd_pcm_uframes_t boundary, stop_threshold, avail_min;
    uint64_t hw;       /* frames clocked since prepare */
    uint64_t appl;     /* frames transferred since prepare */
    uint32_t gen_n;    /* capture: the next frame number of the counter */
    uint64_t clock_n0; /* capture clock: the frame number of tick 0 (t0 at the rate) */
    int xrun;
    /* The STREAM record of the last prepare, written before the stream's
     * first other record: several sinks may share one recording (a driver
     * domain playing while its hot standby has the stream prepared ahead),
     * and a record belongs to the STREAM before it. */
    struct usck_stream pending;
    int stream_pending;
};

/* The capture clock's frame number of time t (ns of CLOCK_MONOTONIC). */
static uint64_t clock_frame(const struct usclock *u, uint64_t t)
{
    return (uint64_t)((unsigned __int128)t * u->io.rate / 1000000000u);
}

static void record(struct usclock *u, struct usck_rec *r, const struct usck_payload *pl)
{
    if (u->rec_fd < 0)
        return;
    int err = 0;
    if (u->stream_pending) {
        struct usck_rec sr = {.type = USCK_STREAM};
        struct usck_payload spl = {{&u->pending, NULL}, {sizeof(u->pending), 0}};
        sr.t_ns = sr.t_seen_ns = pcm_clock_now();
        err = usck_append(u->rec_fd, &sr, &spl);
        u->stream_pending = 0;
    }
    if (err == 0)
        err = usck_append(u->rec_fd, r, pl);
    if (err < 0 && !u->rec_failed) {
        SNDERR("usclock: writing %s: %s", u->conf.file, strerror(-err));
        u->rec_failed = 1;
    }
}

static void record_event(struct usclock *u, enum usck_event ev)
{
    struct usck_rec r = {.type = USCK_EVENT, .arg = ev, .pos = u->hw};
    r.t_ns = r.t_seen_ns = pcm_clock_now();
    record(u, &r, NULL);
}

/* The ring as ALSA areas, one per channel, so snd_pcm_areas_copy converts
 * between it and any application layout. */
static void ring_areas(struct usclock *u, snd_pcm_channel_area_t *a)
{
    for (unsigned c = 0; c < u->io.channels; c++) {
        a[c].addr = u->ring;
        a[c].first = c * u->sample_bytes * 8;
        a[c].step = u->frame_bytes * 8;
    }
}

/* The ring bytes of frames [pos, pos + frames) in at most two pieces. */
static void ring_span(struct usclock *u, uint64_t pos, snd_pcm_uframes_t frames,
                      struct usck_payload *pl)
{
    snd_pcm_uframes_t off = pos % u->ring_frames, first = u->ring_frames - off;
    if (first > frames)
        first = frames;
    pl->p[0] = u->ring + off * u->frame_bytes;
    pl->len[0] = first * u->frame_bytes;
    pl->p[1] = u->ring;
    pl->len[1] = (frames - first) * u->frame_bytes;
}

/* Capture: produce one period of the source at the clock's position. */
static void produce(struct usclock *u, struct usck_payload *pl)
{
    snd_pcm_uframes_t per = u->io.period_size;
    if (u->conf.source == USCLOCK_SRC_CLOCK) /* 32 bits: about 6 h of uptime at 192 kHz */
        u->gen_n = (uint32_t)(u->clock_n0 + u->clk.ticks * per);
    ring_span(u, u->hw, per, pl);
    for (int i = 0; i < 2; i++) {
        unsigned char *p = (unsigned char *)pl->p[i];
        size_t len = pl->len[i], frames = len / u->frame_bytes;
        if (!len)
            continue;
        if (u->conf.source == USCLOCK_SRC_COUNTER || u->conf.source == USCLOCK_SRC_CLOCK) {
            fc_fill(u->fmt, u->io.channels, u->gen_n, frames, p);
        } else {
            ssize_t got = u->src_fd >= 0 ? read(u->src_fd, p, len) : 0;
            if (got < 0)
                got = 0;
            memset(p + got, 0, len - (size_t)got); /* past its end the file is silence */
        }
        u->gen_n += (uint32_t)frames;
    }
}

/* One tick of the clock: one period consumed (playback) or produced (capture). */
static void tick(struct usclock *u, uint64_t now)
{
    snd_pcm_uframes_t per = u->io.period_size, take = per;
    struct usck_rec r = {.type = USCK_PERIOD, .pos = u->hw};
    struct usck_payload pl;
    int64_t avail;

    r.t_ns = u->clk.t0 + pcm_clock_tick_ns(&u->clk, u->clk.ticks);
    r.t_seen_ns = now;
    if (u->io.stream == SND_PCM_STREAM_PLAYBACK) {
        int64_t queued = (int64_t)(u->appl - u->hw);
        if (queued < (int64_t)per)
            take = queued > 0 ? (snd_pcm_uframes_t)queued : 0;
        ring_span(u, u->hw, take, &pl);
    } else {
        produce(u, &pl);
    }
    r.frames = (uint32_t)take;
    record(u, &r, &pl);
    u->hw += per;
    pcm_clock_took(&u->clk);

    if (u->io.stream == SND_PCM_STREAM_PLAYBACK)
        avail = (int64_t)u->ring_frames - (int64_t)(u->appl - u->hw);
    else
        avail = (int64_t)(u->hw - u->appl);
    /* While draining, ioplug itself stops the stream once the ring is empty. */
    if (u->io.state == SND_PCM_STATE_RUNNING && avail >= (int64_t)u->stop_threshold) {
        u->xrun = 1;
        u->clk.running = false;
        pcm_clock_wake_now(&u->clk); /* a poller wakes to POLLERR, as on a card */
        record_event(u, USCK_EV_XRUN);
    }
}

static snd_pcm_uframes_t avail_now(struct usclock *u)
{
    int64_t a;
    if (u->io.stream == SND_PCM_STREAM_PLAYBACK)
        a = (int64_t)u->ring_frames - (int64_t)(u->appl - u->hw);
    else
        a = (int64_t)(u->hw - u->appl);
    return a > 0 ? (snd_pcm_uframes_t)a : 0;
}

/* The poll fd is ready when the application can move avail_min frames, as a
 * sound card's is: at once if there is room (or data) now, else at the next
 * tick. Not while draining: nothing more can be written, and ioplug polls
 * until the ring is empty, which only ticks change. */
static void rearm(struct usclock *u)
{
    if (!u->clk.running)
        return;
    if (u->io.state != SND_PCM_STATE_DRAINING && avail_now(u) >= u->avail_min)
        pcm_clock_wake_now(&u->clk);
    else
        pcm_clock_wake_at_next(&u->clk);
}

/* Process every tick that has fallen since the last call; re-arm. */
static void advance(struct usclock *u)
{
    if (!u->clk.running)
        return;
    pcm_clock_clear(&u->clk);
    uint64_t now = pcm_clock_now();
    while (pcm_clock_due(&u->clk, now))
        tick(u, now);
    rearm(u);
}

static int uc_start(snd_pcm_ioplug_t *io)
{
    struct usclock *u = io->private_data;
    pcm_clock_start(&u->clk, pcm_clock_now());
    u->xrun = 0;
    u->clock_n0 = clock_frame(u, u->clk.t0);
    pcm_clock_clear(&u->clk);
    rearm(u);
    record_event(u, USCK_EV_START);
    return 0;
}

static int uc_stop(snd_pcm_ioplug_t *io)
{
    struct usclock *u = io->private_data;
    advance(u);
    pcm_clock_stop(&u->clk);
    record_event(u, USCK_EV_STOP);
    return 0;
}

static snd_pcm_sframes_t uc_pointer(snd_pcm_ioplug_t *io)
{
    struct usclock *u = io->private_data;
    advance(u);
    if (u->xrun)
        return -EPIPE;
    /* BOUNDARY_WA: the pointer wraps at the boundary, so even a caller that
     * was away for more than a buffer sees every frame the clock took. */
    return (snd_pcm_sframes_t)(u->hw % u->boundary);
}

static snd_pcm_sframes_t uc_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
                                     snd_pcm_uframes_t offset, snd_pcm_uframes_t size)
{
    struct usclock *u = io->private_data;
    snd_pcm_channel_area_t ring[USCLOCK_MAX_CHANNELS];
    snd_pcm_uframes_t done = 0;

    ring_areas(u, ring);
    while (done < size) {
        snd_pcm_uframes_t off = u->appl % u->ring_frames, n = u->ring_frames - off;
        if (n > size - done)
            n = size - done;
        if (io->stream == SND_PCM_STREAM_PLAYBACK)
            snd_pcm_areas_copy(ring, off, areas, offset + done, io->channels, n, io->format);
        else
            snd_pcm_areas_copy(areas, offset + done, ring, off, io->channels, n, io->format);
        u->appl += n;
        done += n;
    }
    pcm_clock_clear(&u->clk);
    rearm(u);
    return (snd_pcm_sframes_t)size;
}

static int uc_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params)
{
    struct usclock *u = io->private_data;
    (void)params;
    switch (io->format) {
    case SND_PCM_FORMAT_S16_LE:
        u->fmt = SND_FMT_S16_LE;
        break;
    case SND_PCM_FORMAT_S24_LE:
        u->fmt = SND_FMT_S24_LE;
        break;
    case SND_PCM_FORMAT_S32_LE:
        u->fmt = SND_FMT_S32_LE;
        break;
    default:
        SNDERR("usclock: format %s not supported", snd_pcm_format_name(io->format));
        return -EINVAL;
    }
    u->sample_bytes = snd_fmt_bytes(u->fmt);
    u->frame_bytes = u->sample_bytes * io->channels;
    free(u->ring);
    u->ring_frames = io->buffer_size;
    u->ring = calloc(u->ring_frames, u->frame_bytes);
    if (!u->ring)
        return -ENOMEM;
    u->boundary = u->stop_threshold = io->buffer_size;
    u->avail_min = io->period_size;
    pcm_clock_setup(&u->clk, io->rate, io->period_size);
    return 0;
}

static int uc_hw_free(snd_pcm_ioplug_t *io)
{
    struct usclock *u = io->private_data;
    free(u->ring);
    u->ring = NULL;
    return 0;
}

static int uc_sw_params(snd_pcm_ioplug_t *io, snd_pcm_sw_params_t *params)
{
    struct usclock *u = io->private_data;
    snd_pcm_uframes_t v;
    if (snd_pcm_sw_params_get_boundary(params, &v) == 0 && v)
        u->boundary = v;
    if (snd_pcm_sw_params_get_stop_threshold(params, &v) == 0)
        u->stop_threshold = v;
    if (snd_pcm_sw_params_get_avail_min(params, &v) == 0)
        u->avail_min = v ? v : 1;
    return 0;
}

static int uc_prepare(snd_pcm_ioplug_t *io)
{
    struct usclock *u = io->private_data;
    u->pending = (struct usck_stream){
        .version = USCK_VERSION,
        .capture = io->stream == SND_PCM_STREAM_CAPTURE,
        .format = u->fmt,
        .channels = io->channels,
        .rate = io->rate,
        .period_frames = (uint32_t)io->period_size,
        .buffer_frames = (uint32_t)io->buffer_size,
        .pid = (uint32_t)getpid(),
    };
    u->stream_pending = 1;

    pcm_clock_stop(&u->clk);
    u->xrun = 0;
    u->hw = u->appl = u->clk.ticks = 0;
    /* Wake a poller at once: a prepared playback stream has room. */
    pcm_clock_clear(&u->clk);
    pcm_clock_wake_now(&u->clk);
    return 0;
}

static int uc_pause(snd_pcm_ioplug_t *io, int enable)
{
    struct usclock *u = io->private_data;
    if (enable) {
        advance(u);
        pcm_clock_pause(&u->clk, pcm_clock_now());
        record_event(u, USCK_EV_PAUSE);
    } else {
        pcm_clock_resume(&u->clk, pcm_clock_now());
        /* the clock ran on while paused: the next tick's frame is where time says */
        u->clock_n0 = clock_frame(u, u->clk.t0 + pcm_clock_tick_ns(&u->clk, u->clk.ticks)) -
                      u->clk.ticks * u->io.period_size;
        rearm(u);
        record_event(u, USCK_EV_RESUME);
    }
    return 0;
}

static int uc_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int nfds,
                           unsigned short *revents)
{
    struct usclock *u = io->private_data;
    (void)nfds;
    *revents = 0;
    if (!(pfd[0].revents & POLLIN))
        return 0;
    pcm_clock_clear(&u->clk);
    advance(u);
    if (u->xrun) {
        /* The xrun is the stream's state before the poller hears of it:
         * alsa-lib turns POLLERR into the state's error (-EPIPE, which a
         * program recovers from by preparing again), or -EIO if the state
         * still says running - as it would when the clock ran out while the
         * program waited in poll (stopped, or not scheduled, for longer
         * than the buffer) and nothing had asked for the pointer since. */
        snd_pcm_ioplug_set_state(io, SND_PCM_STATE_XRUN);
        *revents = POLLERR;
        pcm_clock_wake_now(&u->clk); /* it stays until the stream is prepared again */
    } else if (avail_now(u) >= u->avail_min || io->state == SND_PCM_STATE_DRAINING)
        *revents = io->stream == SND_PCM_STREAM_PLAYBACK ? POLLOUT : POLLIN;
    return 0;
}

static void usclock_free(struct usclock *u)
{
    if (!u)
        return;
    pcm_clock_close(&u->clk);
    if (u->rec_fd >= 0)
        close(u->rec_fd);
    if (u->src_fd >= 0)
        close(u->src_fd);
    free(u->ring);
    usclock_conf_free(&u->conf);
    free(u);
}

static int uc_close(snd_pcm_ioplug_t *io)
{
    usclock_free(io->private_data);
    return 0;
}

static const snd_pcm_ioplug_callback_t usclock_ops = {
    .start = uc_start,
    .stop = uc_stop,
    .pointer = uc_pointer,
    .transfer = uc_transfer,
    .close = uc_close,
    .hw_params = uc_hw_params,
    .hw_free = uc_hw_free,
    .sw_params = uc_sw_params,
    .prepare = uc_prepare,
    .pause = uc_pause,
    .poll_revents = uc_poll_revents,
};

static int set_constraints(snd_pcm_ioplug_t *io)
{
    /* mmap access too: ioplug gives the application a buffer of its own and
     * hands each commit to uc_transfer; alsa-lib's rate, route and plug
     * plugins need it of their slave. */
    static const unsigned int access[] = {
        SND_PCM_ACCESS_RW_INTERLEAVED, SND_PCM_ACCESS_RW_NONINTERLEAVED,
        SND_PCM_ACCESS_MMAP_INTERLEAVED, SND_PCM_ACCESS_MMAP_NONINTERLEAVED};
    static const unsigned int formats[] = {SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_S24_LE,
                                           SND_PCM_FORMAT_S32_LE};
    int err;
    if ((err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_ACCESS, 4, access)) < 0 ||
        (err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_FORMAT, 3, formats)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_CHANNELS, 1,
                                               USCLOCK_MAX_CHANNELS)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_RATE, 8000, 192000)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 64, 1 << 20)) <
            0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIODS, 2, 1024)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_BUFFER_BYTES, 128, 1 << 23)) <
            0)
        return err;
    return 0;
}

static int open_files(struct usclock *u, snd_pcm_stream_t stream)
{
    if (u->conf.file) {
        int fl = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (u->conf.truncate ? O_TRUNC : 0);
        u->rec_fd = open(u->conf.file, fl, 0644);
        if (u->rec_fd < 0) {
            int err = -errno;
            SNDERR("usclock: file %s: %s", u->conf.file, strerror(errno));
            return err;
        }
    }
    if (stream == SND_PCM_STREAM_CAPTURE && u->conf.source == USCLOCK_SRC_FILE) {
        u->src_fd = open(u->conf.capture_file, O_RDONLY | O_CLOEXEC);
        if (u->src_fd < 0) {
            int err = -errno;
            SNDERR("usclock: capture_file %s: %s", u->conf.capture_file, strerror(errno));
            return err;
        }
    }
    return 0;
}

SND_PCM_PLUGIN_DEFINE_FUNC(usclock)
{
    struct usclock *u;
    int err;
    (void)root;

    u = calloc(1, sizeof(*u));
    if (!u)
        return -ENOMEM;
    u->clk.tfd = u->rec_fd = u->src_fd = -1;
    err = usclock_conf_parse(conf, &u->conf);
    if (err < 0)
        goto fail;
    err = open_files(u, stream);
    if (err < 0)
        goto fail;
    if (pcm_clock_open(&u->clk) < 0) {
        err = -errno;
        SNDERR("usclock: timerfd_create: %s", strerror(errno));
        goto fail;
    }
    u->io.version = SND_PCM_IOPLUG_VERSION;
    u->io.name = "usclock: clocked test PCM";
    u->io.callback = &usclock_ops;
    u->io.private_data = u;
    u->io.poll_fd = u->clk.tfd;
    u->io.poll_events = POLLIN;
    /* Not FLAG_MONOTONIC: aplay compares status timestamps with gettimeofday. */
    u->io.flags = SND_PCM_IOPLUG_FLAG_BOUNDARY_WA;
    err = snd_pcm_ioplug_create(&u->io, name, stream, mode);
    if (err < 0)
        goto fail;
    err = set_constraints(&u->io);
    if (err < 0) {
        snd_pcm_ioplug_delete(&u->io); /* calls uc_close, which frees u */
        return err;
    }
    *pcmp = u->io.pcm;
    return 0;
fail:
    usclock_free(u);
    return err;
}

SND_PCM_PLUGIN_SYMBOL(usclock);
