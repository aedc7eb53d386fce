/* pcm_understudy.c - the guest's shadow PCM: an ALSA external (ioplug)
 * plugin, libasound_module_pcm_understudy.so, through which programs play
 * and capture on a virtual sound card that survives its driver domain.
 *
 *   pcm.understudy { type understudy; card 0; device 0 }  (sn_proto.h: socket)
 *
 * The program's time never depends on the backend: the stream's clock is
 * here, CLOCK_MONOTONIC, tick k at start + k periods (pauses left out), a
 * timerfd armed for the next tick as the poll descriptor, each tick moving
 * the hardware pointer one period - as a card's DMA would. Ticks are
 * processed whenever ALSA asks for the pointer, before new data moves, so a
 * late caller sees every period the clock took. Playback: transfers go to
 * understudy-sndfront at their stream position, gathered into one message
 * (up to half the buffer) while the daemon already holds two periods ahead
 * of the clock (a player writing its decoder's 1152 frames at a time costs
 * the daemon one wakeup per half buffer, not one a write); the daemon
 * carries them to the backend, or
 * drops them while there is none. Capture: the
 * daemon's frames queue here; each tick takes a period of them (silence
 * where there are none: a backend being replaced), keeping two periods in
 * hand against jitter.
 *
 * Nothing here blocks on the backend: HELLO, HW_PARAMS and PREPARE wait for
 * the daemon's answer (SNP_REPLY_MS at most), which never waits for the
 * backend. An xrun is the program's own (it wrote too late), as on a card.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>

#include "pcm_clock.h"
#include "sn_plugconf.h"
#include "sn_proto.h"
#include "snd_alsa.h"

#define PRIME_PERIODS 2u /* capture: periods held against the daemon's jitter */
#define SLACK_PERIODS 6u /* capture: more than this and the oldest go */

struct snplug {
    snd_pcm_ioplug_t io;
    int sock;
    struct pcm_clock clk; /* the stream's clock; its timerfd is the poll fd */
    uint32_t seq;
    struct snp_caps caps;
    int sfmt;      /* XENSND_PCM_FORMAT_* of the stream */
    unsigned fb;   /* octets a frame */
    uint8_t *msg;  /* one message (SNP_MAX_MSG) */
    uint8_t *pend; /* playback: a DATA message being gathered (SNP_MAX_MSG) */
    uint32_t pend_frames;
    uint8_t *ring; /* capture: buffer_size frames, interleaved */
    snd_pcm_uframes_t ring_frames;
    snd_pcm_uframes_t boundary, stop_threshold, avail_min;
    uint64_t hw, appl; /* frames since prepare: clocked, transferred */
    int xrun;
    /* capture: frames from the daemon, oldest first */
    uint8_t *cf;
    size_t cf_size, cf_head, cf_len;
    int primed;
    int gone; /* the daemon closed the socket: said once */
};

/* ---- the daemon ---- */

static void lost_daemon(struct snplug *u, const char *what)
{
    if (!u->gone)
        SNDERR("understudy: %s: understudy-sndfront is gone (%s); the stream's audio is dropped",
               what, strerror(errno));
    u->gone = 1;
}

static int send_msg(struct snplug *u, const void *m, size_t len, const char *what)
{
    if (u->gone)
        return -EIO;
    if (send(u->sock, m, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
        if (errno == EAGAIN)
            return -EAGAIN; /* the daemon is behind: this message is dropped */
        lost_daemon(u, what);
        return -EIO;
    }
    return 0;
}

/* Playback: the frames gathered go to the daemon, ending at appl. */
static void flush(struct snplug *u)
{
    if (!u->pend_frames)
        return;
    struct snp_data d = {
        .h = {.type = SNP_DATA}, .pos = u->appl - u->pend_frames, .frames = u->pend_frames};
    memcpy(u->pend, &d, sizeof(d));
    send_msg(u, u->pend, sizeof(d) + (size_t)u->pend_frames * u->fb, "write");
    u->pend_frames = 0;
}

/* Playback: send now unless the daemon holds two periods ahead of the clock
 * and less than half the buffer (at least a period) is gathered: a program
 * that keeps its buffer full then costs the daemon one wakeup per half
 * buffer, not one a period (a buffer of two periods never waits). */
static void flush_if_due(struct snplug *u)
{
    uint64_t sent = u->appl - u->pend_frames;
    snd_pcm_uframes_t gather = u->io.buffer_size / 2;
    if (gather < u->io.period_size)
        gather = u->io.period_size;
    if (u->pend_frames >= gather || !u->clk.running || u->io.state == SND_PCM_STATE_DRAINING ||
        sent < u->hw + 2 * u->io.period_size)
        flush(u);
}

static void cf_put(struct snplug *u, const uint8_t *p, size_t n)
{
    if (n > u->cf_size) {
        p += n - u->cf_size;
        n = u->cf_size;
    }
    if (u->cf_len + n > u->cf_size) { /* the oldest go */
        size_t drop = u->cf_len + n - u->cf_size;
        u->cf_head = (u->cf_head + drop) % u->cf_size;
        u->cf_len -= drop;
    }
    for (size_t k = 0; k < n;) {
        size_t at = (u->cf_head + u->cf_len) % u->cf_size, m = u->cf_size - at;
        if (m > n - k)
            m = n - k;
        memcpy(u->cf + at, p + k, m);
        u->cf_len += m;
        k += m;
    }
}

static size_t cf_get(struct snplug *u, uint8_t *p, size_t n)
{
    if (n > u->cf_len)
        n = u->cf_len;
    for (size_t k = 0; k < n;) {
        size_t m = u->cf_size - u->cf_head;
        if (m > n - k)
            m = n - k;
        memcpy(p + k, u->cf + u->cf_head, m);
        u->cf_head = (u->cf_head + m) % u->cf_size;
        u->cf_len -= m;
        k += m;
    }
    return n;
}

/* One message from the daemon, already received into u->msg: capture
 * frames are queued; a reply for seq is copied to out. 1 if it was that
 * reply, 0 if not, -1 if it makes no sense. */
static int take(struct snplug *u, size_t n, uint32_t seq, void *out, size_t outlen)
{
    struct snp_hdr h;
    if (n < sizeof(h))
        return -1;
    memcpy(&h, u->msg, sizeof(h));
    if (h.type == SNP_DATA) {
        struct snp_data d;
        if (n < sizeof(d) || !u->fb)
            return -1;
        memcpy(&d, u->msg, sizeof(d));
        if (n - sizeof(d) != (size_t)d.frames * u->fb)
            return -1;
        if (u->cf)
            cf_put(u, u->msg + sizeof(d), n - sizeof(d));
        return 0;
    }
    if (h.type != SNP_REPLY && h.type != SNP_CAPS)
        return -1;
    if (out && h.seq == seq && n == outlen) {
        memcpy(out, u->msg, outlen);
        return 1;
    }
    return 0; /* an answer to a question given up on */
}

static void drain_socket(struct snplug *u)
{
    for (int k = 0; k < 256 && !u->gone; k++) {
        ssize_t n = recv(u->sock, u->msg, SNP_MAX_MSG, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (n <= 0) {
            lost_daemon(u, "receive");
            return;
        }
        if (take(u, (size_t)n, 0, NULL, 0) < 0) {
            errno = EPROTO;
            lost_daemon(u, "a message that makes no sense");
        }
    }
}

/* Send m and wait for the answer of type rtype and length rlen. 0 or -errno. */
static int ask(struct snplug *u, void *m, size_t len, void *r, size_t rlen, const char *what)
{
    struct snp_hdr *h = m;
    h->seq = ++u->seq;
    int e = send_msg(u, m, len, what);
    if (e < 0)
        return e == -EAGAIN ? -EIO : e;
    uint64_t end = pcm_clock_now() + (uint64_t)SNP_REPLY_MS * 1000000u;
    for (;;) {
        uint64_t now = pcm_clock_now();
        if (now >= end) {
            SNDERR("understudy: %s: no answer from understudy-sndfront in %u ms", what,
                   SNP_REPLY_MS);
            return -ETIMEDOUT;
        }
        struct pollfd p = {.fd = u->sock, .events = POLLIN};
        if (poll(&p, 1, (int)((end - now) / 1000000u) + 1) < 0 && errno != EINTR)
            return -errno;
        ssize_t n = recv(u->sock, u->msg, SNP_MAX_MSG, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0) {
            lost_daemon(u, what);
            return -EIO;
        }
        int t = take(u, (size_t)n, h->seq, r, rlen);
        if (t < 0) {
            SNDERR("understudy: %s: an answer that makes no sense", what);
            return -EPROTO;
        }
        if (t == 1)
            return 0;
    }
}

static int ask_status(struct snplug *u, void *m, size_t len, const char *what)
{
    struct snp_reply r;
    int e = ask(u, m, len, &r, sizeof(r), what);
    if (e < 0)
        return e;
    if (r.h.type != SNP_REPLY)
        return -EPROTO;
    if (r.status < 0)
        SNDERR("understudy: %s: %s", what, strerror(-r.status));
    return r.status;
}

/* ---- the clock ---- */

static snd_pcm_uframes_t avail_now(const struct snplug *u)
{
    int64_t a;
    if (u->io.stream == SND_PCM_STREAM_PLAYBACK)
        a = (int64_t)u->io.buffer_size - (int64_t)(u->appl - u->hw);
    else
        a = (int64_t)(u->hw - u->appl);
    return a > 0 ? (snd_pcm_uframes_t)a : 0;
}

/* Capture: one period of the daemon's frames into the ring at hw. */
static void capture_period(struct snplug *u)
{
    size_t per = u->io.period_size * u->fb;
    if (!u->primed && u->cf_len >= PRIME_PERIODS * per)
        u->primed = 1;
    if (u->cf_len > SLACK_PERIODS * per) { /* late frames piled up: keep the newest */
        size_t drop = u->cf_len - PRIME_PERIODS * per;
        u->cf_head = (u->cf_head + drop) % u->cf_size;
        u->cf_len -= drop;
    }
    for (size_t k = 0; k < per;) {
        size_t off = (size_t)((u->hw * u->fb + k) % ((size_t)u->ring_frames * u->fb));
        size_t m = (size_t)u->ring_frames * u->fb - off;
        if (m > per - k)
            m = per - k;
        size_t got = u->primed ? cf_get(u, u->ring + off, m) : 0;
        if (got < m) { /* nothing from the daemon (yet, or a backend being replaced) */
            snd_pcm_format_set_silence(u->io.format, u->ring + off + got,
                                       (unsigned)((m - got) / u->fb * u->io.channels));
            if (u->primed)
                u->primed = 0; /* ran dry: wait for a cushion again */
        }
        k += m;
    }
}

static void tick(struct snplug *u)
{
    if (u->io.stream == SND_PCM_STREAM_CAPTURE)
        capture_period(u);
    u->hw += u->io.period_size;
    pcm_clock_took(&u->clk);
    int64_t avail;
    if (u->io.stream == SND_PCM_STREAM_PLAYBACK)
        avail = (int64_t)u->io.buffer_size - (int64_t)(u->appl - u->hw);
    else
        avail = (int64_t)(u->hw - u->appl);
    /* While draining, ioplug itself stops the stream once it is empty. */
    if (u->io.state == SND_PCM_STATE_RUNNING && avail >= (int64_t)u->stop_threshold) {
        u->xrun = 1;
        u->clk.running = false;
        pcm_clock_wake_now(&u->clk); /* a poller wakes to POLLERR, as on a card */
    }
}

/* The poll fd is ready when avail_min frames can move, as a card's is. */
static void rearm(struct snplug *u)
{
    if (!u->clk.running)
        return;
    if (u->io.state != SND_PCM_STATE_DRAINING && avail_now(u) >= u->avail_min)
        pcm_clock_wake_now(&u->clk);
    else
        pcm_clock_wake_at_next(&u->clk);
}

static void advance(struct snplug *u)
{
    if (u->io.stream == SND_PCM_STREAM_CAPTURE)
        drain_socket(u);
    if (!u->clk.running)
        return;
    pcm_clock_clear(&u->clk);
    uint64_t now = pcm_clock_now();
    while (pcm_clock_due(&u->clk, now))
        tick(u);
    if (u->pend_frames)
        flush_if_due(u);
    rearm(u);
}

/* ---- ioplug callbacks ---- */

static int un_start(snd_pcm_ioplug_t *io)
{
    struct snplug *u = io->private_data;
    flush(u);
    pcm_clock_start(&u->clk, pcm_clock_now());
    u->xrun = 0;
    u->primed = 0;
    pcm_clock_clear(&u->clk);
    rearm(u);
    struct snp_clock c = {.h = {.type = SNP_START}, .t0_ns = u->clk.t0, .pos = u->hw};
    send_msg(u, &c, sizeof(c), "start");
    return 0;
}

static int un_stop(snd_pcm_ioplug_t *io)
{
    struct snplug *u = io->private_data;
    advance(u);
    if (io->state == SND_PCM_STATE_DRAINING)
        flush(u);
    u->pend_frames = 0; /* dropped, as the frames the daemon holds are */
    pcm_clock_stop(&u->clk);
    struct snp_stop s = {
        .h = {.type = SNP_STOP}, .drain = io->state == SND_PCM_STATE_DRAINING, .pos = u->hw};
    send_msg(u, &s, sizeof(s), "stop");
    return 0;
}

static snd_pcm_sframes_t un_pointer(snd_pcm_ioplug_t *io)
{
    struct snplug *u = io->private_data;
    advance(u);
    if (u->xrun)
        return -EPIPE;
    /* BOUNDARY_WA: the pointer wraps at the boundary, so a caller away for
     * more than a buffer still sees every frame the clock took. */
    return (snd_pcm_sframes_t)(u->hw % u->boundary);
}

static void ring_areas(const struct snplug *u, uint8_t *base, snd_pcm_channel_area_t *a)
{
    unsigned sb = u->fb / u->io.channels;
    for (unsigned c = 0; c < u->io.channels; c++) {
        a[c].addr = base;
        a[c].first = c * sb * 8;
        a[c].step = u->fb * 8;
    }
}

static snd_pcm_sframes_t un_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
                                     snd_pcm_uframes_t offset, snd_pcm_uframes_t size)
{
    struct snplug *u = io->private_data;
    snd_pcm_channel_area_t a[SNP_MAX_CHANNELS];
    if (io->stream == SND_PCM_STREAM_PLAYBACK) {
        /* Gathered in messages of at most SNP_MAX_MSG. */
        snd_pcm_uframes_t per = (SNP_MAX_MSG - sizeof(struct snp_data)) / u->fb;
        ring_areas(u, u->pend + sizeof(struct snp_data), a);
        for (snd_pcm_uframes_t done = 0; done < size;) {
            if (u->pend_frames == per)
                flush(u);
            snd_pcm_uframes_t n = size - done, room = per - u->pend_frames;
            if (n > room)
                n = room;
            snd_pcm_areas_copy(a, u->pend_frames, areas, offset + done, io->channels, n,
                               io->format);
            u->pend_frames += (uint32_t)n;
            u->appl += n;
            done += n;
        }
        flush_if_due(u);
    } else {
        ring_areas(u, u->ring, a);
        for (snd_pcm_uframes_t done = 0; done < size;) {
            snd_pcm_uframes_t off = u->appl % u->ring_frames, n = u->ring_frames - off;
            if (n > size - done)
                n = size - done;
            snd_pcm_areas_copy(areas, offset + done, a, off, io->channels, n, io->format);
            u->appl += n;
            done += n;
        }
    }
    pcm_clock_clear(&u->clk);
    rearm(u);
    return (snd_pcm_sframes_t)size;
}

static int un_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params)
{
    struct snplug *u = io->private_data;
    (void)params;
    u->sfmt = sndc_format_from_alsa(io->format);
    int w = snd_pcm_format_physical_width(io->format);
    if (u->sfmt < 0 || w < 8 || io->channels > SNP_MAX_CHANNELS)
        return -EINVAL;
    u->fb = (unsigned)w / 8 * io->channels;
    struct snp_hw_params m = {.h = {.type = SNP_HW_PARAMS},
                              .rate = io->rate,
                              .format = (uint32_t)u->sfmt,
                              .channels = io->channels,
                              .buffer_frames = (uint32_t)io->buffer_size,
                              .period_frames = (uint32_t)io->period_size};
    int e = ask_status(u, &m, sizeof(m), "hw_params");
    if (e < 0)
        return e;
    free(u->ring);
    free(u->cf);
    u->ring = NULL;
    u->cf = NULL;
    if (io->stream == SND_PCM_STREAM_CAPTURE) {
        u->ring_frames = io->buffer_size;
        u->ring = calloc(u->ring_frames, u->fb);
        u->cf_size = ((size_t)io->buffer_size + (SLACK_PERIODS + 2) * io->period_size) * u->fb;
        u->cf = malloc(u->cf_size);
        if (!u->ring || !u->cf)
            return -ENOMEM;
        u->cf_head = u->cf_len = 0;
    }
    u->boundary = u->stop_threshold = io->buffer_size;
    u->avail_min = io->period_size;
    pcm_clock_setup(&u->clk, io->rate, io->period_size);
    return 0;
}

static int un_hw_free(snd_pcm_ioplug_t *io)
{
    struct snplug *u = io->private_data;
    free(u->ring);
    free(u->cf);
    u->ring = NULL;
    u->cf = NULL;
    return 0;
}

static int un_sw_params(snd_pcm_ioplug_t *io, snd_pcm_sw_params_t *params)
{
    struct snplug *u = io->private_data;
    snd_pcm_uframes_t v;
    if (snd_pcm_sw_params_get_boundary(params, &v) == 0 && v)
        u->boundary = v;
    if (snd_pcm_sw_params_get_stop_threshold(params, &v) == 0)
        u->stop_threshold = v;
    if (snd_pcm_sw_params_get_avail_min(params, &v) == 0)
        u->avail_min = v ? v : 1;
    return 0;
}

static int un_prepare(snd_pcm_ioplug_t *io)
{
    struct snplug *u = io->private_data;
    struct snp_hdr m = {.type = SNP_PREPARE};
    int e = ask_status(u, &m, sizeof(m), "prepare");
    if (e < 0)
        return e;
    pcm_clock_stop(&u->clk);
    u->xrun = 0;
    u->pend_frames = 0;
    u->hw = u->appl = u->clk.ticks = 0;
    u->cf_head = u->cf_len = 0;
    u->primed = 0;
    pcm_clock_clear(&u->clk);
    pcm_clock_wake_now(&u->clk); /* a prepared playback stream has room: wake a poller */
    return 0;
}

static int un_pause(snd_pcm_ioplug_t *io, int enable)
{
    struct snplug *u = io->private_data;
    uint64_t now = pcm_clock_now();
    if (enable) {
        advance(u);
        flush(u);
        pcm_clock_pause(&u->clk, now);
    } else {
        pcm_clock_resume(&u->clk, now);
        rearm(u);
    }
    struct snp_pause p = {.h = {.type = SNP_PAUSE}, .on = enable != 0, .t_ns = now};
    send_msg(u, &p, sizeof(p), "pause");
    return 0;
}

static int un_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int nfds,
                           unsigned short *revents)
{
    struct snplug *u = io->private_data;
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
    } else if (avail_now(u) >= u->avail_min || io->state == SND_PCM_STATE_DRAINING) {
        *revents = io->stream == SND_PCM_STREAM_PLAYBACK ? POLLOUT : POLLIN;
    }
    return 0;
}

static void snplug_free(struct snplug *u)
{
    if (!u)
        return;
    pcm_clock_close(&u->clk);
    if (u->sock >= 0)
        close(u->sock);
    free(u->ring);
    free(u->cf);
    free(u->msg);
    free(u->pend);
    free(u);
}

static int un_close(snd_pcm_ioplug_t *io)
{
    snplug_free(io->private_data);
    return 0;
}

static const snd_pcm_ioplug_callback_t un_ops = {
    .start = un_start,
    .stop = un_stop,
    .pointer = un_pointer,
    .transfer = un_transfer,
    .close = un_close,
    .hw_params = un_hw_params,
    .hw_free = un_hw_free,
    .sw_params = un_sw_params,
    .prepare = un_prepare,
    .pause = un_pause,
    .poll_revents = un_poll_revents,
};

/* What the card allows this stream, as the daemon said. */
static int set_constraints(struct snplug *u)
{
    snd_pcm_ioplug_t *io = &u->io;
    static const unsigned int access[] = {
        SND_PCM_ACCESS_RW_INTERLEAVED, SND_PCM_ACCESS_RW_NONINTERLEAVED,
        SND_PCM_ACCESS_MMAP_INTERLEAVED, SND_PCM_ACCESS_MMAP_NONINTERLEAVED};
    unsigned int fmts[64], nf = 0;
    for (unsigned f = 0; f < 64 && nf < 64; f++) {
        snd_pcm_format_t a =
            (u->caps.formats >> f) & 1 ? sndc_format_alsa(f) : SND_PCM_FORMAT_UNKNOWN;
        if (a != SND_PCM_FORMAT_UNKNOWN && snd_pcm_format_physical_width(a) >= 8)
            fmts[nf++] = (unsigned)a;
    }
    unsigned nr = u->caps.nr_rates < SNP_MAX_RATES ? u->caps.nr_rates : SNP_MAX_RATES;
    unsigned ch_max = u->caps.ch_max < SNP_MAX_CHANNELS ? u->caps.ch_max : SNP_MAX_CHANNELS;
    if (!nf || !nr || u->caps.ch_min < 1 || u->caps.ch_min > ch_max || u->caps.buffer_max < 256) {
        SNDERR("understudy: the stream '%s' allows no configuration", u->caps.name);
        return -EINVAL;
    }
    int err;
    if ((err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_ACCESS, 4, access)) < 0 ||
        (err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_FORMAT, nf, fmts)) < 0 ||
        (err = snd_pcm_ioplug_set_param_list(io, SND_PCM_IOPLUG_HW_RATE, nr, u->caps.rates)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_CHANNELS, u->caps.ch_min,
                                               ch_max)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 64,
                                               u->caps.buffer_max / 2)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_PERIODS, 2, 1024)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(io, SND_PCM_IOPLUG_HW_BUFFER_BYTES, 128,
                                               u->caps.buffer_max)) < 0)
        return err;
    return 0;
}

static int connect_daemon(struct snplug *u, const char *path, long device, snd_pcm_stream_t stream)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(a.sun_path)) {
        SNDERR("understudy: socket path %s too long", path);
        return -EINVAL;
    }
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    u->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (u->sock < 0 || connect(u->sock, (struct sockaddr *)&a, sizeof(a)) < 0) {
        int e = errno;
        SNDERR("understudy: connect %s: %s (is understudy-sndfront running?)", path, strerror(e));
        return -e;
    }
    int sz = 1 << 20;
    setsockopt(u->sock, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
    setsockopt(u->sock, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
    struct snp_hello h = {.h = {.type = SNP_HELLO},
                          .version = SNP_VERSION,
                          .role = SNP_ROLE_PCM,
                          .pcm_device = (uint32_t)device,
                          .capture = stream == SND_PCM_STREAM_CAPTURE,
                          .pid = (uint32_t)getpid()};
    int e = ask(u, &h, sizeof(h), &u->caps, sizeof(u->caps), "open");
    if (e < 0)
        return e;
    if (u->caps.h.type != SNP_CAPS)
        return -EPROTO;
    if (u->caps.status < 0) {
        SNDERR("understudy: PCM device %ld %s: %s", device,
               stream == SND_PCM_STREAM_CAPTURE ? "capture" : "playback",
               u->caps.status == -EBUSY ? "in use by another program" : strerror(-u->caps.status));
        return u->caps.status;
    }
    u->caps.name[sizeof(u->caps.name) - 1] = 0;
    return 0;
}

SND_PCM_PLUGIN_DEFINE_FUNC(understudy)
{
    (void)root;
    char path[108];
    long card, device = 0;
    int err = sn_plugconf(conf, path, sizeof(path), &card, &device);
    if (err < 0)
        return err;
    struct snplug *u = calloc(1, sizeof(*u));
    if (!u)
        return -ENOMEM;
    u->sock = -1;
    u->clk.tfd = -1;
    u->msg = malloc(SNP_MAX_MSG);
    u->pend = malloc(SNP_MAX_MSG);
    if (!u->msg || !u->pend) {
        err = -ENOMEM;
        goto fail;
    }
    err = connect_daemon(u, path, device, stream);
    if (err < 0)
        goto fail;
    if (pcm_clock_open(&u->clk) < 0) {
        err = -errno;
        SNDERR("understudy: timerfd_create: %s", strerror(errno));
        goto fail;
    }
    u->io.version = SND_PCM_IOPLUG_VERSION;
    u->io.name = "understudy: shadow PCM";
    u->io.callback = &un_ops;
    u->io.private_data = u;
    u->io.poll_fd = u->clk.tfd;
    u->io.poll_events = POLLIN;
    /* Not FLAG_MONOTONIC: aplay compares status timestamps with gettimeofday. */
    u->io.flags = SND_PCM_IOPLUG_FLAG_BOUNDARY_WA;
    err = snd_pcm_ioplug_create(&u->io, name, stream, mode);
    if (err < 0)
        goto fail;
    err = set_constraints(u);
    if (err < 0) {
        snd_pcm_ioplug_delete(&u->io); /* calls un_close, which frees u */
        return err;
    }
    *pcmp = u->io.pcm;
    return 0;
fail:
    snplug_free(u);
    return err;
}

SND_PCM_PLUGIN_SYMBOL(understudy);
