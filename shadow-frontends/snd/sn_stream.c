/* sn_stream.c - one stream: its shadow and the sndif protocol to whichever
 * backend is connected (see sn_stream.h). */
#define _GNU_SOURCE
#include "sn_stream.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The shared buffer's tail carries volume values and mute masks. */
#define CTL_VOL    0u   /* int32 per channel */
#define CTL_MUTE   256u /* one byte per channel: channels to mute */
#define CTL_UNMUTE 320u /* ... to unmute */
#define CTL_BYTES  384u
/* Octets kept from the card's buffer-size for them (CAPS). */
#define CTL_RESERVE 512u

void sn_stream_log(const struct sn_stream *s, bool error, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    s->host->log(s->host->arg, s, error, msg);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t frames_to_ms(const struct sn_stream *s, uint64_t frames)
{
    return s->hw.rate ? frames * 1000u / s->hw.rate : 0;
}

static unsigned ctl_bytes(unsigned fb)
{
    return (CTL_BYTES + fb - 1) / fb * fb;
}

void sn_stream_init(struct sn_stream *s, const struct sn_host *host, unsigned index,
                    const struct sndc_stream *cfg, bool shadow)
{
    memset(s, 0, sizeof(*s));
    s->host = host;
    s->index = index;
    s->cfg = *cfg;
    s->shadow = shadow;
}

void sn_stream_free(struct sn_stream *s)
{
    sn_ring_teardown(&s->r);
    sn_ring_teardown(&s->sb);
    free(s->win);
    s->win = NULL;
}

void sn_stream_caps(const struct sn_stream *s, struct snp_caps *c)
{
    const struct sndc_params *p = &s->cfg.p;
    c->stream = s->index;
    c->nr_rates = p->nr_rates < SNP_MAX_RATES ? p->nr_rates : SNP_MAX_RATES;
    memcpy(c->rates, p->rates, c->nr_rates * sizeof(uint32_t));
    c->formats = p->formats;
    c->ch_min = p->ch_min;
    c->ch_max = p->ch_max < SNP_MAX_CHANNELS ? p->ch_max : SNP_MAX_CHANNELS;
    c->buffer_max = p->buffer_size > CTL_RESERVE ? p->buffer_size - CTL_RESERVE : 0;
    snprintf(c->name, sizeof(c->name), "%.63s", s->cfg.unique_id);
}

uint64_t sn_stream_clock(const struct sn_stream *s, uint64_t t)
{
    switch (s->run) {
    case SN_RUNNING:
    case SN_DRAINING:
        if (t <= s->t0_ns || !s->hw.rate)
            return s->pos0;
        return s->pos0 + (uint64_t)((unsigned __int128)(t - s->t0_ns) * s->hw.rate / 1000000000u);
    case SN_PAUSED:
        return s->pause_pos;
    default:
        return 0;
    }
}

/* ---- requests ---- */

static bool can_talk(const struct sn_stream *s)
{
    return s->up && (s->be == SN_BE_OPENING || s->be == SN_BE_OPEN);
}

static int issue(struct sn_stream *s, struct xensnd_req *q, uint64_t tag, uint64_t now)
{
    q->operation = (uint8_t)SN_TAG_OP(tag);
    if (sn_ring_issue(&s->r, q, tag, now) < 0) {
        /* Never with the ring sized for what one stream has in flight. */
        sn_stream_log(s, true, "request ring full: operation %u not sent", SN_TAG_OP(tag));
        return -1;
    }
    return 0;
}

static void simple(struct sn_stream *s, unsigned op, uint64_t now)
{
    struct xensnd_req q;
    memset(&q, 0, sizeof(q));
    issue(s, &q, SN_TAG(op, 0, 0), now);
}

static void trigger(struct sn_stream *s, unsigned type, uint64_t now)
{
    struct xensnd_req q;
    memset(&q, 0, sizeof(q));
    q.op.trigger.type = (uint8_t)type;
    issue(s, &q, SN_TAG(XENSND_OP_TRIGGER, 0, 0), now);
}

static void values(struct sn_stream *s, unsigned op, uint32_t at, uint32_t len, uint64_t now)
{
    struct xensnd_req q;
    memset(&q, 0, sizeof(q));
    q.op.rw.offset = s->ctl_off + at;
    q.op.rw.length = len;
    issue(s, &q, SN_TAG(op, 0, 0), now);
}

/* Volume and mute as the program set them (a backend's start at 0 dB, on). */
static void apply_volume(struct sn_stream *s, uint64_t now)
{
    if (!can_talk(s) || !s->r.buf)
        return;
    unsigned ch = s->hw.channels;
    uint8_t *c = s->r.buf + s->ctl_off;
    if (s->vol_set) {
        memcpy(c + CTL_VOL, s->vol, ch * sizeof(int32_t));
        values(s, XENSND_OP_SET_VOLUME, CTL_VOL, ch * (uint32_t)sizeof(int32_t), now);
    }
    if (s->mute_set) {
        bool any_m = false, any_u = false;
        for (unsigned k = 0; k < ch; k++) {
            c[CTL_MUTE + k] = s->mute[k] != 0;
            c[CTL_UNMUTE + k] = s->mute[k] == 0;
            any_m |= s->mute[k] != 0;
            any_u |= s->mute[k] == 0;
        }
        if (any_m)
            values(s, XENSND_OP_MUTE, CTL_MUTE, ch, now);
        if (any_u)
            values(s, XENSND_OP_UNMUTE, CTL_UNMUTE, ch, now);
    }
}

static void start_backend(struct sn_stream *s, uint64_t now);

static void open_backend(struct sn_stream *s, uint64_t now)
{
    if (!s->up || !s->have_params)
        return;
    if (s->be == SN_BE_CLOSING || !sn_ring_room(&s->r)) {
        s->open_wanted = true;
        return;
    }
    if (s->be != SN_BE_CLOSED)
        return;
    s->open_wanted = false;
    struct xensnd_req q;
    if (sn_stream_open_req(s, &s->r, &q, &s->data_sz) < 0) {
        sn_stream_log(s, true, "sharing a buffer of %u octets with domain %u: %m",
                      s->hw.buffer_frames * s->fb, s->r.domid);
        return;
    }
    s->ctl_off = s->data_sz;
    /* No CLOSE is in flight (be CLOSED): every event on the page is the last
     * OPEN's, and the backend numbers this OPEN's from 0. */
    sn_ring_events_reset(&s->r);
    if (issue(s, &q, SN_TAG(XENSND_OP_OPEN, 0, 0), now) < 0)
        return;
    s->be = SN_BE_OPENING;
    s->be_started = s->be_paused = s->be_dirty = false;
    s->woff = s->inflight = 0;
    s->bepos = 0;
    apply_volume(s, now);
    /* A program that started while the stream was being (re)opened: its
     * audio goes out as it comes, behind this START. */
    if (s->run == SN_RUNNING || s->run == SN_DRAINING)
        start_backend(s, now);
}

int sn_stream_open_req(const struct sn_stream *s, struct sn_ring *r, struct xensnd_req *q,
                       uint32_t *data_sz)
{
    uint32_t dir, dsz = s->hw.buffer_frames * s->fb;
    if (sn_ring_buffer(r, dsz + ctl_bytes(s->fb), &dir) < 0)
        return -1;
    memset(q, 0, sizeof(*q));
    q->operation = XENSND_OP_OPEN;
    q->op.open.pcm_rate = s->hw.rate;
    q->op.open.pcm_format = (uint8_t)s->hw.format;
    q->op.open.pcm_channels = (uint8_t)s->hw.channels;
    q->op.open.buffer_sz = r->buf_sz;
    q->op.open.gref_directory = dir;
    q->op.open.period_sz = s->hw.period_frames * s->fb;
    *data_sz = dsz;
    return 0;
}

bool sn_stream_same_hw(const struct snp_hw_params *a, const struct snp_hw_params *b)
{
    return !memcmp(&a->rate, &b->rate, sizeof(*a) - offsetof(struct snp_hw_params, rate));
}

static void close_backend(struct sn_stream *s, uint64_t now)
{
    if (!can_talk(s))
        return;
    simple(s, XENSND_OP_CLOSE, now);
    s->be = SN_BE_CLOSING;
    s->be_started = s->be_paused = false;
}

static void start_backend(struct sn_stream *s, uint64_t now)
{
    if (!can_talk(s) || s->be_started)
        return;
    trigger(s, XENSND_OP_TRIGGER_START, now);
    s->be_started = s->be_dirty = true;
    s->be_paused = false;
    s->evt_ms = now;
}

static void stop_backend(struct sn_stream *s, uint64_t now)
{
    if (!can_talk(s) || !s->be_started)
        return;
    trigger(s, XENSND_OP_TRIGGER_STOP, now);
    s->be_started = s->be_paused = false;
}

/* ---- answers and events ---- */

static void on_rsp(void *arg, uint64_t tag, const struct xensnd_resp *rsp)
{
    struct sn_stream *s = arg;
    unsigned op = SN_TAG_OP(tag);
    uint32_t off = SN_TAG_OFF(tag), len = SN_TAG_LEN(tag);
    switch (op) {
    case XENSND_OP_OPEN:
        s->restoring = false;
        if (rsp->status == 0) {
            if (s->be == SN_BE_OPENING)
                s->be = SN_BE_OPEN;
            s->lost = s->lost_wall = false; /* reopened: the recovery's figures are final */
        } else {
            /* The card advertised these parameters: the backend's device
             * cannot do them after all. The program's audio is dropped. */
            sn_stream_log(s, true,
                          "backend refused OPEN (%u Hz, %s, %u channels): status %d; audio dropped",
                          s->hw.rate, sndc_format_name(s->hw.format), s->hw.channels, rsp->status);
            s->be = SN_BE_CLOSED;
            s->be_started = false;
        }
        break;
    case XENSND_OP_CLOSE:
        s->be = SN_BE_CLOSED;
        break;
    case XENSND_OP_WRITE:
    case XENSND_OP_READ:
        s->inflight -= len <= s->inflight ? len : s->inflight;
        if (rsp->status) {
            if ((op == XENSND_OP_WRITE ? s->write_errors++ : s->read_errors++) < 5)
                sn_stream_log(s, true, "%s of %u octets: status %d",
                              op == XENSND_OP_WRITE ? "WRITE" : "READ", len, rsp->status);
        } else if (op == XENSND_OP_READ && s->fb && off + len <= s->data_sz && s->client) {
            /* Copied out of the shared buffer by the host before the next READ
             * can land there. */
            s->host->capture(s->host->capture_arg, s, s->rd_pos, s->r.buf + off, len / s->fb);
        }
        if (op == XENSND_OP_READ && s->fb)
            s->rd_pos += len / s->fb;
        break;
    default:
        if (rsp->status)
            sn_stream_log(s, true, "operation %u: status %d", op, rsp->status);
        break;
    }
}

struct evt_ctx {
    struct sn_stream *s;
    uint64_t now;
    char *why;
    size_t len;
    bool bad;
};

static void on_evt(void *arg, uint64_t position)
{
    struct evt_ctx *e = arg;
    struct sn_stream *s = e->s;
    if (e->bad)
        return;
    /* A CLOSE in flight, or answered this turn: until the backend read it, it
     * may have reported the closed OPEN's position. Nothing to act on. */
    if (s->be == SN_BE_CLOSING || s->be == SN_BE_CLOSED)
        return;
    /* OPENING too: its answer may be held back while its events are not. */
    if (!s->fb) {
        snprintf(e->why, e->len, "a position event (%" PRIu64 ") for a stream never opened",
                 position);
        e->bad = true;
        return;
    }
    /* Playback: never past what was sent. Capture: never more than the time
     * since the start at the stream's rate, and a buffer. */
    uint64_t f = position / s->fb, limit = s->sent - s->base;
    if (s->cfg.capture) {
        uint64_t clk = sn_stream_clock(s, now_ns());
        limit = (clk > s->base ? clk - s->base : 0) + s->hw.buffer_frames;
    }
    if (position % s->fb || f < s->bepos || f > limit) {
        snprintf(e->why, e->len,
                 "position %" PRIu64 " octets: not a whole frame, behind the last (%" PRIu64
                 " frames) or past what it can be (%" PRIu64 " frames)",
                 position, s->bepos, limit);
        e->bad = true;
        return;
    }
    s->bepos = f;
    s->evt_ms = e->now;
    if (f)
        s->gap_open = false; /* heard again */
}

/* ---- moving audio ---- */

static void pump_playback(struct sn_stream *s, uint64_t now)
{
    if (s->be != SN_BE_OPENING && s->be != SN_BE_OPEN)
        return;
    if (s->appl > s->win_frames && s->sent < s->appl - s->win_frames) {
        s->late_drops += s->appl - s->win_frames - s->sent; /* overwritten before it went */
        s->sent = s->appl - s->win_frames;
    }
    while (s->sent < s->appl && sn_ring_room(&s->r)) {
        uint32_t free_b = s->data_sz - s->inflight, contig = s->data_sz - s->woff;
        uint64_t n = s->appl - s->sent;
        uint32_t room = (free_b < contig ? free_b : contig) / s->fb;
        if (n > room)
            n = room;
        uint32_t wpos = (uint32_t)(s->sent % s->win_frames);
        if (n > s->win_frames - wpos)
            n = s->win_frames - wpos; /* one piece of the window at a time */
        if (!n)
            break;
        uint32_t len = (uint32_t)n * s->fb;
        memcpy(s->r.buf + s->woff, s->win + (size_t)wpos * s->fb, len);
        struct xensnd_req q;
        memset(&q, 0, sizeof(q));
        q.op.rw.offset = s->woff;
        q.op.rw.length = len;
        /* the audio is in the buffer /then/ the request (the push's barrier) */
        if (issue(s, &q, SN_TAG(XENSND_OP_WRITE, s->woff, len), now) < 0)
            break;
        s->woff = (s->woff + len) % s->data_sz;
        s->inflight += len;
        s->sent += n;
    }
}

static void pump_capture(struct sn_stream *s, uint64_t now)
{
    if (s->be != SN_BE_OPEN || !s->be_started || s->run != SN_RUNNING)
        return;
    while (s->base + s->bepos > s->sent && sn_ring_room(&s->r)) {
        uint32_t free_b = s->data_sz - s->inflight, contig = s->data_sz - s->woff;
        uint64_t n = s->base + s->bepos - s->sent;
        uint32_t room = (free_b < contig ? free_b : contig) / s->fb;
        if (n > room)
            n = room;
        if (!n)
            break;
        uint32_t len = (uint32_t)n * s->fb;
        struct xensnd_req q;
        memset(&q, 0, sizeof(q));
        q.op.rw.offset = s->woff;
        q.op.rw.length = len;
        if (issue(s, &q, SN_TAG(XENSND_OP_READ, s->woff, len), now) < 0)
            break;
        s->woff = (s->woff + len) % s->data_sz;
        s->inflight += len;
        s->sent += n;
    }
}

void sn_stream_end_drain(struct sn_stream *s, uint64_t now)
{
    if (s->run != SN_DRAINING)
        return;
    stop_backend(s, now);
    s->run = SN_IDLE;
    if (!s->client)
        close_backend(s, now);
    sn_ring_push(&s->r);
}

int sn_stream_service(struct sn_stream *s, uint64_t now, char *why, size_t len)
{
    if (!s->up)
        return 0;
    /* Playing, and the backend reports its position each period: those
     * events bring the loop round, so WRITE answers need no wakeup of their
     * own (one a period saved). Not while the buffer is half in flight: its
     * answers free the room the next audio needs. */
    sn_ring_quiet(&s->r, !s->cfg.capture && s->be == SN_BE_OPEN && s->be_started && !s->be_paused &&
                             s->run == SN_RUNNING && s->bepos > 0 && s->inflight < s->data_sz / 2);
    int h = sn_ring_harvest(&s->r, on_rsp, s, why, len);
    if (h < 0)
        return -1;
    struct evt_ctx e = {.s = s, .now = now, .why = why, .len = len};
    int ev = sn_ring_events(&s->r, on_evt, &e, why, len);
    if (ev < 0 || e.bad)
        return -1;
    if (s->open_wanted && s->be == SN_BE_CLOSED)
        open_backend(s, now);
    if (s->cfg.capture)
        pump_capture(s, now);
    else
        pump_playback(s, now);
    if (s->run == SN_DRAINING && (s->base + s->bepos >= s->appl || now >= s->drain_until))
        sn_stream_end_drain(s, now);
    sn_ring_push(&s->r);
    return h > 0 || ev > 0;
}

/* ---- from the program ---- */

int sn_stream_hw_params(struct sn_stream *s, const struct snp_hw_params *hw, uint64_t now)
{
    const struct sndc_params *p = &s->cfg.p;
    unsigned bytes = hw->format < SNDC_NR_FORMATS ? sndc_format_bytes(hw->format) : 0;
    unsigned chmax = p->ch_max < SNP_MAX_CHANNELS ? p->ch_max : SNP_MAX_CHANNELS;
    if (!sndc_has_rate(p, hw->rate) || !bytes || !(p->formats & (1ull << hw->format)) ||
        hw->channels < p->ch_min || hw->channels > chmax || hw->period_frames == 0 ||
        hw->buffer_frames < 2 || hw->period_frames > hw->buffer_frames)
        return -EINVAL;
    unsigned fb = bytes * hw->channels;
    if ((uint64_t)hw->buffer_frames * fb + ctl_bytes(fb) > p->buffer_size)
        return -EINVAL;
    uint8_t *w = realloc(s->win, (size_t)hw->buffer_frames * fb);
    if (!w)
        return -ENOMEM;
    s->win = w;
    s->win_frames = hw->buffer_frames;
    bool same = s->have_params && sn_stream_same_hw(&s->hw, hw);
    s->hw = *hw;
    s->fb = fb;
    s->have_params = true;
    s->run = SN_IDLE;
    if (!same && s->be != SN_BE_CLOSED) {
        stop_backend(s, now);
        close_backend(s, now);
    }
    sn_ring_push(&s->r);
    return 0;
}

int sn_stream_prepare(struct sn_stream *s, uint64_t now)
{
    if (!s->have_params)
        return -EBADFD;
    s->run = SN_PREPARED;
    s->appl = s->pos0 = s->pause_pos = 0;
    s->base = s->sent = s->rd_pos = s->bepos = 0;
    s->lost = s->gap_open = false; /* positions afresh (the time of a loss is kept: lost_wall) */
    if (s->up) {
        /* Audio or a start left on the backend from before: open it afresh. */
        if (s->be_dirty || s->inflight || s->be == SN_BE_CLOSING) {
            stop_backend(s, now);
            close_backend(s, now);
            s->open_wanted = true;
        } else if (s->be == SN_BE_CLOSED) {
            open_backend(s, now);
        }
        s->woff = s->inflight = 0;
        sn_ring_push(&s->r);
    }
    return 0;
}

void sn_stream_start(struct sn_stream *s, const struct snp_clock *c, uint64_t now)
{
    if (s->run != SN_PREPARED)
        return;
    s->t0_ns = c->t0_ns;
    s->pos0 = c->pos;
    s->run = SN_RUNNING;
    if (s->cfg.capture) {
        s->base = s->sent = s->rd_pos = c->pos;
        s->bepos = 0;
    }
    start_backend(s, now);
    sn_ring_push(&s->r);
}

void sn_stream_stop(struct sn_stream *s, const struct snp_stop *st, uint64_t now)
{
    /* After a drain the program's stream is over (its clock played it all);
     * the drop that follows it, at close, does not cut the backend's tail. */
    if (s->run == SN_IDLE || s->run == SN_DRAINING)
        return;
    if (st->drain && !s->cfg.capture && s->run == SN_RUNNING && s->hw.rate) {
        /* What the backend has not played yet, and a little more. */
        uint64_t left = s->appl > s->base + s->bepos ? s->appl - s->base - s->bepos : 0;
        s->drain_until = now + frames_to_ms(s, left + 2u * s->hw.period_frames) + 100;
        s->run = SN_DRAINING;
        return;
    }
    stop_backend(s, now);
    s->run = SN_IDLE;
    sn_ring_push(&s->r);
}

void sn_stream_pause(struct sn_stream *s, const struct snp_pause *p, uint64_t now)
{
    if (p->on && s->run == SN_RUNNING) {
        s->pause_pos = sn_stream_clock(s, p->t_ns);
        s->run = SN_PAUSED;
        if (can_talk(s) && s->be_started && !s->be_paused) {
            trigger(s, XENSND_OP_TRIGGER_PAUSE, now);
            s->be_paused = true;
        }
    } else if (!p->on && s->run == SN_PAUSED) {
        s->t0_ns = p->t_ns;
        s->pos0 = s->pause_pos;
        s->run = SN_RUNNING;
        if (can_talk(s) && s->be_paused) {
            trigger(s, XENSND_OP_TRIGGER_RESUME, now);
            s->be_paused = false;
            s->evt_ms = now;
        } else {
            start_backend(s, now);
        }
    }
    sn_ring_push(&s->r);
}

void sn_stream_data(struct sn_stream *s, uint64_t pos, const uint8_t *frames, uint32_t n,
                    uint64_t now)
{
    if (s->cfg.capture || s->run == SN_IDLE || !s->win_frames)
        return;
    if (pos > s->appl) { /* frames the program skipped: silence */
        uint64_t gap = pos - s->appl;
        for (uint64_t k = 0; k < gap && k < s->win_frames; k++)
            memset(s->win + (size_t)((s->appl + k) % s->win_frames) * s->fb, 0, s->fb);
    }
    for (uint32_t k = 0; k < n;) {
        uint32_t at = (uint32_t)((pos + k) % s->win_frames), m = s->win_frames - at;
        if (m > n - k)
            m = n - k;
        memcpy(s->win + (size_t)at * s->fb, frames + (size_t)k * s->fb, (size_t)m * s->fb);
        k += m;
    }
    if (pos + n > s->appl)
        s->appl = pos + n;
    if (s->up) {
        pump_playback(s, now);
        sn_ring_push(&s->r);
    }
}

int sn_stream_set_volume(struct sn_stream *s, const int32_t *vol, const uint8_t *mute, unsigned n,
                         uint64_t now)
{
    if (n == 0 || n > SNP_MAX_CHANNELS)
        return -EINVAL;
    for (unsigned k = 0; k < n; k++)
        if (vol[k] > 24000 || vol[k] < -200000) /* sndback's range: -200..+24 dB */
            return -ERANGE;
    /* A stereo control on a mono stream: the first channel counts. */
    for (unsigned k = 0; k < SNP_MAX_CHANNELS; k++) {
        s->vol[k] = vol[k < n ? k : n - 1];
        s->mute[k] = mute[k < n ? k : n - 1] != 0;
    }
    s->vol_set = s->mute_set = true;
    apply_volume(s, now);
    sn_ring_push(&s->r);
    return 0;
}

void sn_stream_detach(struct sn_stream *s, uint64_t now)
{
    s->client = NULL;
    if (s->run == SN_DRAINING)
        return; /* plays out; closed at its end */
    stop_backend(s, now);
    close_backend(s, now);
    s->run = SN_IDLE;
    s->have_params = false;
    sn_ring_push(&s->r);
}

/* ---- the backend ---- */

static void transport_up(struct sn_stream *s)
{
    s->up = true;
    s->be = SN_BE_CLOSED;
    s->be_started = s->be_paused = s->be_dirty = s->open_wanted = false;
    s->woff = s->inflight = 0;
}

int sn_stream_setup(struct sn_stream *s, xengntshr_handle *gs, xenevtchn_handle *xce,
                    uint32_t domid)
{
    if (sn_ring_setup(&s->r, gs, xce, domid) < 0)
        return -1;
    transport_up(s);
    return 0;
}

/* The standby's transport becomes the live one. A stream it had open with
 * the program's parameters (or an OPEN still in flight) is carried over:
 * sn_stream_connected starts it there without opening it again. */
void sn_stream_promote(struct sn_stream *s, uint64_t now)
{
    enum sn_be held = s->sb_be;
    bool same = s->have_params && sn_stream_same_hw(&s->sb_hw, &s->hw);
    sn_ring_teardown(&s->r);
    /* The ring's state holds pointers to its shared pages, none into itself:
     * it moves as a value. */
    s->r = s->sb;
    memset(&s->sb, 0, sizeof(s->sb));
    s->sb_be = SN_BE_CLOSED;
    s->sb_refused = false;
    transport_up(s);
    s->carried = false;
    if (held == SN_BE_CLOSED)
        return;
    s->be = held;
    if ((held == SN_BE_OPEN || held == SN_BE_OPENING) && same) {
        s->carried = true;
        s->data_sz = s->hw.buffer_frames * s->fb;
        s->ctl_off = s->data_sz;
        return;
    }
    /* Open with other parameters, or closing: opened afresh once closed. */
    close_backend(s, now);
    s->open_wanted = true;
}

void sn_stream_lost(struct sn_stream *s, uint64_t now)
{
    bool live = s->up && s->be == SN_BE_OPEN && s->be_started;
    if (!live || (s->run != SN_RUNNING && s->run != SN_PAUSED && s->run != SN_DRAINING))
        return; /* a fault during a recovery: the first one's figures stand */
    /* What it surely played is its last report; what it may have played
     * goes on at the stream's rate since, never past what it was sent: the
     * new backend starts after that, so that nothing is heard twice. */
    uint64_t since =
        s->run == SN_PAUSED || now < s->evt_ms ? 0 : s->hw.rate * (now - s->evt_ms) / 1000u;
    uint64_t upto = s->base + s->bepos + since;
    if (!s->cfg.capture && upto > s->sent)
        upto = s->sent;
    if (!s->gap_open || s->bepos) {
        s->played_at = s->base + s->bepos;
        s->lost_evt_ms = s->evt_ms && s->evt_ms <= now ? s->evt_ms : now;
    }
    s->played_max = upto;
    s->lost = true;
    s->lost_wall = true;
    s->gap_open = true;
}

static void down(struct sn_stream *s)
{
    s->up = false;
    s->be = SN_BE_CLOSED;
    s->be_started = s->be_paused = s->be_dirty = s->open_wanted = s->restoring = false;
    s->woff = s->inflight = 0;
}

void sn_stream_teardown(struct sn_stream *s)
{
    sn_ring_teardown(&s->retired);
    sn_ring_teardown(&s->r);
    down(s);
}

void sn_stream_retire(struct sn_stream *s)
{
    sn_ring_teardown(&s->retired); /* an earlier one's, if any */
    s->retired = s->r;
    memset(&s->r, 0, sizeof(s->r));
    down(s);
}

void sn_stream_release(struct sn_stream *s)
{
    sn_ring_teardown(&s->retired);
}

/* The stream was prepared again since the fault (the program underran
 * while the guest had no CPU): its positions start afresh, so the gap is
 * the time from the failed backend's last report, in frames. */
static void wall_gap(struct sn_stream *s, uint64_t now)
{
    uint64_t ms = now > s->lost_evt_ms ? now - s->lost_evt_ms : 0;
    s->gap_frames = (uint64_t)s->hw.rate * ms / 1000u;
    s->gap_known = true;
}

void sn_stream_connected(struct sn_stream *s, uint64_t now)
{
    s->gap_known = false;
    if (!s->have_params || s->run == SN_IDLE || (!s->client && s->run != SN_DRAINING)) {
        s->lost_wall = s->gap_open = false; /* no program on it: nothing of it was missed */
        return;
    }
    if (!s->shadow) {
        s->lost_wall = s->gap_open = false;
        /* Restart only: a restarting stock driver knows nothing of the
         * stream; the program's audio goes nowhere until it prepares again. */
        s->run = SN_IDLE;
        s->lost = false;
        return;
    }
    bool carried = s->carried;
    s->carried = false;
    if (carried)
        apply_volume(s, now); /* behind its OPEN: done on the standby, or in flight */
    else
        open_backend(s, now);
    s->restoring = s->be == SN_BE_OPENING || s->open_wanted;
    uint64_t at = sn_stream_clock(s, now_ns());
    if (s->lost && s->played_max > at)
        at = s->played_max; /* never what the old backend may have played already */
    switch (s->run) {
    case SN_RUNNING:
    case SN_DRAINING:
    case SN_PAUSED:
        s->base = s->sent = s->rd_pos = at;
        s->bepos = 0;
        if (s->lost) {
            s->gap_frames = at - s->played_at;
            s->gap_known = true;
        } else if (s->lost_wall) {
            wall_gap(s, now);
        }
        s->lost_wall = false;
        if (s->run != SN_PAUSED) {
            if (!s->cfg.capture)
                pump_playback(s, now); /* what the program wrote ahead of the clock */
            start_backend(s, now);
        }
        if (s->run == SN_DRAINING) {
            uint64_t left = s->appl > at ? s->appl - at : 0;
            s->drain_until = now + frames_to_ms(s, left + 2u * s->hw.period_frames) + 100;
        }
        break;
    default: /* prepared: the audio written so far goes to the new backend */
        s->base = s->sent = s->rd_pos = s->bepos = 0;
        s->lost = false;
        if (s->lost_wall)
            wall_gap(s, now);
        s->lost_wall = s->gap_open = false;
        break;
    }
    if (carried && s->be == SN_BE_OPEN)
        s->lost = s->lost_wall = false; /* as at an OPEN's answer: the figures are final */
    sn_ring_push(&s->r);
}

bool sn_stream_restored(const struct sn_stream *s)
{
    return !s->restoring;
}

bool sn_stream_oldest(const struct sn_stream *s, uint64_t *since)
{
    return s->up && sn_ring_oldest(&s->r, since);
}

bool sn_stream_stalled(const struct sn_stream *s, uint64_t now, unsigned deadline_ms, char *why,
                       size_t len)
{
    if (!s->up || s->be != SN_BE_OPEN || !s->be_started || s->be_paused ||
        (s->run != SN_RUNNING && s->run != SN_DRAINING) || now - s->evt_ms < deadline_ms)
        return false;
    uint64_t queued = s->sent - s->base > s->bepos ? s->sent - s->base - s->bepos : 0;
    if (!s->cfg.capture && queued <= 2u * s->hw.period_frames)
        return false; /* it has little to play: its position may rest */
    snprintf(why, len,
             "stream %u/%u: position stopped at %" PRIu64 " frames for %" PRIu64 " ms with %" PRIu64
             " frames queued",
             s->cfg.pcm_idx, s->cfg.idx, s->bepos, now - s->evt_ms, queued);
    return true;
}

unsigned sn_stream_timeout(const struct sn_stream *s, uint64_t now, unsigned deadline_ms,
                           unsigned cap)
{
    uint64_t due = UINT64_MAX;
    if (s->run == SN_DRAINING)
        due = s->drain_until;
    /* The moment its position would be overdue (sn_stream_stalled), and no
     * turn before: while events come, they wake the loop. */
    if (s->up && s->be == SN_BE_OPEN && s->be_started && !s->be_paused &&
        (s->run == SN_RUNNING || s->run == SN_DRAINING) && s->evt_ms + deadline_ms < due)
        due = s->evt_ms + deadline_ms;
    if (due == UINT64_MAX)
        return cap;
    uint64_t left = due > now ? due - now : 0;
    return left < cap ? (unsigned)left : cap;
}
