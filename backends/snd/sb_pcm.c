/* sb_pcm.c - a stream's ALSA PCM, non-blocking and driven by the core's
 * loop: the PCM's poll descriptors sit in an epoll set of the stream's own
 * (so their POLLOUT/POLLIN survive), that set in the core's loop. Playback
 * moves the FIFO into the PCM when it has room; capture moves what the PCM
 * captured into the FIFO. Only TRIGGER starts a PCM (its start threshold is
 * the boundary). The position comes from the PCM's own clock: frames
 * written less snd_pcm_delay() (playback), frames captured (capture); one
 * CUR_POS event per period boundary it passes. While playback has nothing
 * to move, a one-period timer looks at the clock instead of the poll set.
 */
#define _GNU_SOURCE
#include "sb.h"

#include <xen/errno.h>

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define SB_MAX_PFDS 8

static void service(struct sb_stream *s);

const char *sb_pcm_name(const struct sb_stream *s)
{
    return s->pcm_name[0] ? s->pcm_name : s->d->default_pcm ? s->d->default_pcm : "default";
}

static void watch(struct sb_stream *s, bool on)
{
    struct sb_pcm *p = &s->pcm;
    if (on == p->watched || !p->h)
        return;
    struct pollfd pfd[SB_MAX_PFDS];
    int n = snd_pcm_poll_descriptors(p->h, pfd, SB_MAX_PFDS);
    for (int i = 0; i < n; i++) {
        struct epoll_event ev = {.events = 0, .data.u32 = (uint32_t)i};
        if (pfd[i].events & POLLIN)
            ev.events |= EPOLLIN;
        if (pfd[i].events & POLLOUT)
            ev.events |= EPOLLOUT;
        if (on && epoll_ctl(p->epfd, EPOLL_CTL_ADD, pfd[i].fd, &ev) < 0 && errno != EEXIST)
            BE_LOG_RL(s->d->be, "stream %u/%u: epoll add: %s", s->pcm_idx, s->idx, strerror(errno));
        if (!on)
            epoll_ctl(p->epfd, EPOLL_CTL_DEL, pfd[i].fd, NULL);
    }
    p->watched = on;
}

static void on_pcm(void *opaque, int fd, uint32_t events)
{
    (void)events;
    struct sb_stream *s = opaque;
    struct epoll_event ev[SB_MAX_PFDS];
    int n = epoll_wait(fd, ev, SB_MAX_PFDS, 0);
    struct pollfd pfd[SB_MAX_PFDS];
    int np = snd_pcm_poll_descriptors(s->pcm.h, pfd, SB_MAX_PFDS);
    for (int i = 0; i < np; i++)
        pfd[i].revents = 0;
    for (int i = 0; i < n; i++) {
        uint32_t k = ev[i].data.u32;
        if ((int)k < np)
            pfd[k].revents = (short)((ev[i].events & EPOLLIN ? POLLIN : 0) |
                                     (ev[i].events & EPOLLOUT ? POLLOUT : 0) |
                                     (ev[i].events & EPOLLERR ? POLLERR : 0));
    }
    unsigned short rev;
    if (np > 0)
        snd_pcm_poll_descriptors_revents(s->pcm.h, pfd, (unsigned)np, &rev);
    service(s);
}

static void on_timer(void *opaque)
{
    struct sb_stream *s = opaque;
    s->pcm.timer = 0;
    service(s);
}

static void report(struct sb_stream *s, uint64_t pos)
{
    struct sb_pcm *p = &s->pcm;
    if (pos > p->pos_bytes)
        p->pos_bytes = pos;
    if (!s->period_sz)
        return;
    while (p->pos_bytes >= p->next_evt + s->period_sz) {
        p->next_evt += s->period_sz;
        sb_evt_position(s, p->next_evt);
    }
}

/* Frames the PCM holds, not yet played. */
static uint64_t queued(struct sb_pcm *p)
{
    snd_pcm_sframes_t d = 0;
    if (snd_pcm_state(p->h) == SND_PCM_STATE_XRUN || snd_pcm_delay(p->h, &d) < 0 || d < 0)
        return 0;
    return (uint64_t)d > p->frames_io ? p->frames_io : (uint64_t)d;
}

static void recover(struct sb_stream *s, const char *what)
{
    BE_LOG_RL(s->d->be, "stream %u/%u: %s: preparing the PCM again", s->pcm_idx, s->idx, what);
    snd_pcm_prepare(s->pcm.h);
    s->pcm.need_start = s->run == SB_RUNNING;
}

static void play(struct sb_stream *s)
{
    struct sb_pcm *p = &s->pcm;
    snd_pcm_state_t st = snd_pcm_state(p->h);
    if (st == SND_PCM_STATE_XRUN) {
        report(s, p->frames_io * s->frame_bytes); /* all it had was played */
        recover(s, "underrun");
    }
    if (s->run != SB_PAUSED) {
        while (p->fifo_len >= s->frame_bytes) {
            snd_pcm_sframes_t avail = snd_pcm_avail_update(p->h);
            if (avail < 0) {
                recover(s, snd_strerror((int)avail));
                break;
            }
            snd_pcm_uframes_t n = p->fifo_len / s->frame_bytes;
            if (n > (snd_pcm_uframes_t)avail)
                n = (snd_pcm_uframes_t)avail;
            if (n > p->period_frames)
                n = p->period_frames;
            if (!n)
                break;
            sb_fifo_peek(p, p->stage, n * s->frame_bytes);
            sb_volume_apply(s, p->stage, n);
            snd_pcm_sframes_t w = snd_pcm_writei(p->h, p->stage, n);
            if (w == -EAGAIN)
                break;
            if (w < 0) {
                recover(s, snd_strerror((int)w));
                break;
            }
            sb_fifo_drop(p, (size_t)w * s->frame_bytes);
            p->frames_io += (uint64_t)w;
        }
    }
    if (p->need_start && s->run == SB_RUNNING) {
        uint64_t q = queued(p);
        if (q >= p->period_frames || (q && p->fifo_len < s->frame_bytes)) {
            int e = snd_pcm_start(p->h);
            if (e < 0)
                BE_LOG_RL(s->d->be, "stream %u/%u: snd_pcm_start: %s", s->pcm_idx, s->idx,
                          snd_strerror(e));
            p->need_start = false;
        }
    }
    if (s->run == SB_RUNNING && !p->need_start)
        report(s, (p->frames_io - queued(p)) * s->frame_bytes);
    watch(s, s->run != SB_PAUSED && p->fifo_len >= s->frame_bytes);
    if (s->run == SB_RUNNING && !p->watched && !p->timer) {
        uint64_t ms = (uint64_t)p->period_frames * 1000 / s->rate;
        p->timer = be_loop_add_timer(be_loop_of(s->d->be), ms ? ms : 1, on_timer, s);
    }
}

static void capture(struct sb_stream *s)
{
    struct sb_pcm *p = &s->pcm;
    if (s->run != SB_RUNNING) {
        watch(s, false);
        return;
    }
    if (snd_pcm_state(p->h) == SND_PCM_STATE_XRUN) {
        recover(s, "overrun");
        snd_pcm_start(p->h);
    }
    for (;;) {
        snd_pcm_sframes_t n = snd_pcm_readi(p->h, p->stage, p->period_frames);
        if (n == -EAGAIN || n == 0)
            break;
        if (n < 0) {
            recover(s, snd_strerror((int)n));
            snd_pcm_start(p->h);
            break;
        }
        size_t bytes = (size_t)n * s->frame_bytes;
        sb_volume_apply(s, p->stage, (size_t)n);
        if (p->fifo_size - p->fifo_len < bytes) {
            /* The frontend does not read: the oldest audio goes, as on a card. */
            sb_fifo_drop(p, bytes - (p->fifo_size - p->fifo_len));
        }
        sb_fifo_put(p, p->stage, bytes);
        p->frames_io += (uint64_t)n;
    }
    report(s, p->frames_io * s->frame_bytes);
    watch(s, true);
}

static void service(struct sb_stream *s)
{
    if (!s->open || !s->pcm.h)
        return;
    if (be_fault_hung(s->d->be)) {
        /* A hung driver moves no audio and reports no position (the PCM
         * underruns or overruns, as under a hung card driver); the core's
         * callbacks at the hang's end bring it back (sb_ring_event). */
        watch(s, false);
        be_loop_del_timer(be_loop_of(s->d->be), s->pcm.timer);
        s->pcm.timer = 0;
        return;
    }
    if (s->capture)
        capture(s);
    else
        play(s);
}

void sb_pcm_kick(struct sb_stream *s)
{
    service(s);
}

static int set_params(struct sb_stream *s)
{
    struct sb_pcm *p = &s->pcm;
    snd_pcm_hw_params_t *hw;
    snd_pcm_sw_params_t *sw;
    snd_pcm_hw_params_alloca(&hw);
    snd_pcm_sw_params_alloca(&sw);
    snd_pcm_uframes_t buf = s->buffer_sz / s->frame_bytes;
    snd_pcm_uframes_t per = s->period_sz ? s->period_sz / s->frame_bytes : buf / 4;
    if (!per)
        per = 1;
    int e;
    const char *what = "hw_params_any";
    if ((e = snd_pcm_hw_params_any(p->h, hw)) < 0 ||
        (what = "access",
         e = snd_pcm_hw_params_set_access(p->h, hw, SND_PCM_ACCESS_RW_INTERLEAVED)) < 0 ||
        (what = "format", e = snd_pcm_hw_params_set_format(p->h, hw, s->afmt)) < 0 ||
        (what = "channels", e = snd_pcm_hw_params_set_channels(p->h, hw, s->channels)) < 0 ||
        (what = "rate", e = snd_pcm_hw_params_set_rate(p->h, hw, s->rate, 0)) < 0 ||
        (what = "period", e = snd_pcm_hw_params_set_period_size_near(p->h, hw, &per, NULL)) < 0 ||
        (what = "buffer", e = snd_pcm_hw_params_set_buffer_size_near(p->h, hw, &buf)) < 0 ||
        (what = "hw_params", e = snd_pcm_hw_params(p->h, hw)) < 0) {
        BE_LOG_RL(s->d->be, "stream %u/%u: PCM %s: %s: %s", s->pcm_idx, s->idx, sb_pcm_name(s),
                  what, snd_strerror(e));
        return -1;
    }
    snd_pcm_hw_params_get_period_size(hw, &p->period_frames, NULL);
    snd_pcm_hw_params_get_buffer_size(hw, &p->buffer_frames);
    p->can_pause = snd_pcm_hw_params_can_pause(hw);
    snd_pcm_uframes_t boundary;
    if ((e = snd_pcm_sw_params_current(p->h, sw)) < 0 ||
        (e = snd_pcm_sw_params_get_boundary(sw, &boundary)) < 0 ||
        (e = snd_pcm_sw_params_set_start_threshold(p->h, sw, boundary)) < 0 ||
        (e = snd_pcm_sw_params_set_avail_min(p->h, sw, p->period_frames)) < 0 ||
        /* Playback: what the card has played is overwritten with silence, so
         * an underrun plays silence until it is noticed, not the audio of a
         * buffer ago (a card reads on past the last frame written until its
         * period interrupt sees the underrun). */
        (!s->capture && (e = snd_pcm_sw_params_set_silence_threshold(p->h, sw, 0)) < 0) ||
        (!s->capture && (e = snd_pcm_sw_params_set_silence_size(p->h, sw, boundary)) < 0) ||
        (e = snd_pcm_sw_params(p->h, sw)) < 0) {
        BE_LOG_RL(s->d->be, "stream %u/%u: PCM %s: sw params: %s", s->pcm_idx, s->idx,
                  sb_pcm_name(s), snd_strerror(e));
        return -1;
    }
    return 0;
}

int sb_pcm_open(struct sb_stream *s)
{
    struct sb_pcm *p = &s->pcm;
    memset(p, 0, sizeof(*p));
    p->epfd = -1;
    int e = snd_pcm_open(&p->h, sb_pcm_name(s),
                         s->capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK,
                         SND_PCM_NONBLOCK);
    if (e < 0) {
        p->h = NULL;
        BE_LOG_RL(s->d->be, "stream %u/%u: opening PCM %s: %s", s->pcm_idx, s->idx, sb_pcm_name(s),
                  snd_strerror(e));
        return -1;
    }
    if (set_params(s) < 0)
        return -1;
    p->fifo_size = s->buffer_sz + p->buffer_frames * s->frame_bytes;
    p->fifo = malloc(p->fifo_size);
    p->stage = malloc(p->period_frames * s->frame_bytes);
    p->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (!p->fifo || !p->stage || p->epfd < 0 ||
        be_loop_add_fd(be_loop_of(s->d->be), p->epfd, on_pcm, s) < 0) {
        BE_LOG_RL(s->d->be, "stream %u/%u: %s", s->pcm_idx, s->idx, strerror(errno));
        return -1;
    }
    p->in_loop = true;
    return 0;
}

void sb_pcm_close(struct sb_stream *s)
{
    struct sb_pcm *p = &s->pcm;
    be_loop_del_timer(be_loop_of(s->d->be), p->timer);
    if (p->in_loop)
        be_loop_del_fd(be_loop_of(s->d->be), p->epfd);
    if (p->epfd >= 0)
        close(p->epfd);
    if (p->h)
        snd_pcm_close(p->h);
    free(p->fifo);
    free(p->stage);
    memset(p, 0, sizeof(*p));
    p->epfd = -1;
}

int sb_pcm_trigger(struct sb_stream *s, unsigned type)
{
    struct sb_pcm *p = &s->pcm;
    switch (type) {
    case XENSND_OP_TRIGGER_START:
        if (s->run != SB_STOPPED)
            return -XEN_EINVAL;
        s->run = SB_RUNNING;
        if (s->capture) {
            int e = snd_pcm_start(p->h);
            if (e < 0) {
                s->run = SB_STOPPED;
                BE_LOG_RL(s->d->be, "stream %u/%u: snd_pcm_start: %s", s->pcm_idx, s->idx,
                          snd_strerror(e));
                return -XEN_EIO;
            }
        } else {
            p->need_start = true;
        }
        break;
    case XENSND_OP_TRIGGER_PAUSE:
        if (s->run != SB_RUNNING)
            return -XEN_EINVAL;
        if (!s->capture)
            play(s); /* the position up to now */
        if (p->can_pause && !p->need_start)
            snd_pcm_pause(p->h, 1);
        else if (!p->need_start) {
            p->frames_io -= queued(p); /* dropped unplayed: queued again from nothing */
            snd_pcm_drop(p->h);
            snd_pcm_prepare(p->h);
        }
        s->run = SB_PAUSED;
        watch(s, false);
        be_loop_del_timer(be_loop_of(s->d->be), p->timer);
        p->timer = 0;
        return 0;
    case XENSND_OP_TRIGGER_RESUME:
        if (s->run != SB_PAUSED)
            return -XEN_EINVAL;
        s->run = SB_RUNNING;
        if (snd_pcm_state(p->h) == SND_PCM_STATE_PAUSED)
            snd_pcm_pause(p->h, 0);
        else if (s->capture)
            snd_pcm_start(p->h);
        else
            p->need_start = true;
        break;
    case XENSND_OP_TRIGGER_STOP:
        if (s->run == SB_STOPPED)
            return 0;
        if (!s->capture)
            p->frames_io -= queued(p);
        snd_pcm_drop(p->h);
        snd_pcm_prepare(p->h);
        sb_fifo_drop(p, p->fifo_len);
        s->run = SB_STOPPED;
        p->need_start = false;
        watch(s, false);
        be_loop_del_timer(be_loop_of(s->d->be), p->timer);
        p->timer = 0;
        return 0;
    default:
        return -XEN_EINVAL;
    }
    service(s);
    return 0;
}
