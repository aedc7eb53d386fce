/* sn_server.c - the unix socket the guest's ALSA plugins talk to (the
 * messages are sn_proto.h's). One program per stream; any number of mixers.
 * A client is a program of the guest's: every message is length-checked
 * against its type before use, and one that makes no sense closes that
 * client, never the daemon.
 */
#define _GNU_SOURCE
#include "sn_server.h"

#include "sf_log.h"

#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SOCK_BUF (1u << 20) /* asked for each client socket: audio ahead of the clock */

static void slog(const struct sn_server *d, enum sf_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void slog(const struct sn_server *d, enum sf_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sf_vlogf(d->log, d->log_arg, level, fmt, ap);
    va_end(ap);
}

static void mkdir_parent(const struct sn_server *d, const char *path)
{
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return;
    *slash = 0;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        slog(d, SF_LOG_ERR, "mkdir %s: %m", dir);
}

int sn_server_open(struct sn_server *d, const char *path, struct sn_stream *st, unsigned nst,
                   sf_log_sink *log, void *log_arg)
{
    memset(d, 0, sizeof(*d));
    d->lfd = -1;
    d->path = path;
    d->st = st;
    d->nst = nst;
    d->log = log;
    d->log_arg = log_arg;
    d->msg = malloc(SNP_MAX_MSG);
    d->out = malloc(SNP_MAX_MSG);
    if (!d->msg || !d->out) {
        slog(d, SF_LOG_ERR, "out of memory");
        return -1;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(d->path) >= sizeof(a.sun_path)) {
        slog(d, SF_LOG_ERR, "socket path %s: longer than %zu bytes", d->path,
             sizeof(a.sun_path) - 1);
        return -1;
    }
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", d->path);
    mkdir_parent(d, a.sun_path);
    d->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (d->lfd < 0) {
        slog(d, SF_LOG_ERR, "socket: %m");
        return -1;
    }
    unlink(a.sun_path); /* a socket left by an earlier run */
    if (bind(d->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(d->lfd, 16) < 0) {
        slog(d, SF_LOG_ERR, "bind/listen %s: %m", a.sun_path);
        return -1;
    }
    /* Programs of every user of the guest play sound, as through a card's
     * device node. */
    chmod(a.sun_path, 0666);
    return 0;
}

static void drop_client(struct sn_server *d, unsigned i, uint64_t now, const char *why)
{
    struct sn_client *c = &d->cl[i];
    if (why)
        slog(d, SF_LOG_ERR, "client (pid %u): %s; closing it", c->pid, why);
    if (c->role == SNP_ROLE_PCM && c->stream >= 0) {
        struct sn_stream *s = &d->st[c->stream];
        if (s->client == c)
            sn_stream_detach(s, now);
        if (c->drops)
            slog(d, SF_LOG_DEBUG,
                 "stream %u: %llu capture periods its program did not take in time", c->stream,
                 (unsigned long long)c->drops);
    }
    close(c->fd);
    /* Keep the table dense; a stream's client pointer follows its entry. */
    d->cl[i] = d->cl[--d->ncl];
    if (i < d->ncl && d->cl[i].role == SNP_ROLE_PCM && d->cl[i].stream >= 0)
        d->st[d->cl[i].stream].client = &d->cl[i];
}

void sn_server_close(struct sn_server *d)
{
    while (d->ncl)
        drop_client(d, d->ncl - 1, 0, NULL);
    if (d->lfd >= 0) {
        close(d->lfd);
        unlink(d->path);
    }
    d->lfd = -1;
    free(d->msg);
    free(d->out);
    d->msg = d->out = NULL;
}

static void accept_all(struct sn_server *d)
{
    for (;;) {
        int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EINTR)
                slog(d, SF_LOG_ERR, "accept: %m");
            return;
        }
        if (d->ncl == SN_MAX_CLIENTS) {
            slog(d, SF_LOG_ERR, "more than %u clients: refusing one", SN_MAX_CLIENTS);
            close(fd);
            continue;
        }
        int sz = (int)SOCK_BUF;
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
        d->cl[d->ncl++] = (struct sn_client){.fd = fd, .stream = -1};
    }
}

static void send_msg(struct sn_server *d, struct sn_client *c, const void *m, size_t len)
{
    if (send(c->fd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EPIPE)
        slog(d, SF_LOG_ERR, "client (pid %u): send: %m", c->pid);
}

static void reply(struct sn_server *d, struct sn_client *c, uint32_t seq, int status,
                  uint32_t streams)
{
    struct snp_reply r = {
        .h = {.type = SNP_REPLY, .seq = seq}, .status = status, .streams = streams};
    send_msg(d, c, &r, sizeof(r));
}

static int find_stream(const struct sn_server *d, uint32_t pcm, uint32_t capture)
{
    for (unsigned i = 0; i < d->nst; i++)
        if (d->st[i].cfg.pcm_idx == pcm && d->st[i].cfg.capture == (capture != 0))
            return (int)i;
    return -1;
}

static const char *hello(struct sn_server *d, struct sn_client *c, const struct snp_hello *h,
                         uint64_t now)
{
    if (c->role)
        return "HELLO twice";
    if (h->version != SNP_VERSION)
        return "protocol version not ours";
    c->pid = h->pid;
    if (h->role == SNP_ROLE_CTL) {
        c->role = SNP_ROLE_CTL;
        reply(d, c, h->h.seq, 0, d->nst);
        return NULL;
    }
    if (h->role != SNP_ROLE_PCM)
        return "unknown role";
    c->role = SNP_ROLE_PCM;
    struct snp_caps caps = {.h = {.type = SNP_CAPS, .seq = h->h.seq}};
    int i = find_stream(d, h->pcm_device, h->capture);
    if (i < 0) {
        caps.status = -ENOENT;
    } else if (d->st[i].client) {
        caps.status = -EBUSY;
    } else {
        struct sn_stream *s = &d->st[i];
        c->stream = i;
        s->client = c;
        sn_stream_end_drain(s, now); /* the last program's tail, if it still plays */
        sn_stream_caps(s, &caps);
        slog(d, SF_LOG_DEBUG, "stream %d (%u/%u, %s): opened by pid %u", i, s->cfg.pcm_idx,
             s->cfg.idx, s->cfg.capture ? "capture" : "playback", c->pid);
    }
    send_msg(d, c, &caps, sizeof(caps));
    return NULL;
}

static const char *vol_get(struct sn_server *d, struct sn_client *c, const struct snp_vol_ask *a)
{
    struct snp_vol v = {.h = {.type = SNP_VOL, .seq = a->h.seq}};
    if (a->stream >= d->nst) {
        v.status = -ENOENT;
    } else {
        const struct sn_stream *s = &d->st[a->stream];
        v.stream = a->stream;
        v.pcm_device = s->cfg.pcm_idx;
        v.capture = s->cfg.capture;
        v.channels = s->cfg.p.ch_max < SNP_MAX_CHANNELS ? s->cfg.p.ch_max : SNP_MAX_CHANNELS;
        memcpy(v.vol, s->vol, sizeof(v.vol));
        memcpy(v.mute, s->mute, sizeof(v.mute));
    }
    send_msg(d, c, &v, sizeof(v));
    return NULL;
}

/* One message from a client; NULL, or why the client is closed. */
static const char *dispatch(struct sn_server *d, struct sn_client *c, const uint8_t *m, size_t n,
                            uint64_t now)
{
    struct snp_hdr h;
    if (n < sizeof(h))
        return "a message shorter than its header";
    memcpy(&h, m, sizeof(h));
    static const size_t need[] = {
        [SNP_HELLO] = sizeof(struct snp_hello), [SNP_HW_PARAMS] = sizeof(struct snp_hw_params),
        [SNP_PREPARE] = sizeof(struct snp_hdr), [SNP_START] = sizeof(struct snp_clock),
        [SNP_STOP] = sizeof(struct snp_stop),   [SNP_PAUSE] = sizeof(struct snp_pause),
        [SNP_DATA] = sizeof(struct snp_data),   [SNP_VOL_GET] = sizeof(struct snp_vol_ask),
        [SNP_VOL_SET] = sizeof(struct snp_vol),
    };
    if (h.type >= sizeof(need) / sizeof(need[0]) || !need[h.type])
        return "a message of a type clients do not send";
    if (n < need[h.type] || (h.type != SNP_DATA && n != need[h.type]))
        return "a message of the wrong length for its type";
    /* Aligned copies of the fixed part. */
    union {
        struct snp_hello hello;
        struct snp_hw_params hw;
        struct snp_clock clk;
        struct snp_stop stop;
        struct snp_pause pause;
        struct snp_data data;
        struct snp_vol_ask ask;
        struct snp_vol vol;
    } u;
    memcpy(&u, m, need[h.type]);
    if (h.type == SNP_HELLO)
        return hello(d, c, &u.hello, now);
    if (c->role == SNP_ROLE_CTL) {
        if (h.type == SNP_VOL_GET)
            return vol_get(d, c, &u.ask);
        if (h.type != SNP_VOL_SET)
            return "a PCM message from a mixer";
        int st = u.vol.stream < d->nst ? sn_stream_set_volume(&d->st[u.vol.stream], u.vol.vol,
                                                              u.vol.mute, u.vol.channels, now)
                                       : -ENOENT;
        reply(d, c, h.seq, st, 0);
        return NULL;
    }
    if (c->role != SNP_ROLE_PCM)
        return "a message before HELLO";
    if (c->stream < 0)
        return "a PCM message without a stream";
    struct sn_stream *s = &d->st[c->stream];
    switch (h.type) {
    case SNP_HW_PARAMS:
        reply(d, c, h.seq, sn_stream_hw_params(s, &u.hw, now), 0);
        return NULL;
    case SNP_PREPARE:
        reply(d, c, h.seq, sn_stream_prepare(s, now), 0);
        return NULL;
    case SNP_START:
        sn_stream_start(s, &u.clk, now);
        return NULL;
    case SNP_STOP:
        sn_stream_stop(s, &u.stop, now);
        return NULL;
    case SNP_PAUSE:
        sn_stream_pause(s, &u.pause, now);
        return NULL;
    case SNP_DATA:
        if (!s->have_params || s->cfg.capture)
            return "DATA without parameters, or on a capture stream";
        if (u.data.frames > SNP_MAX_MSG / s->fb ||
            n - sizeof(struct snp_data) != (size_t)u.data.frames * s->fb)
            return "DATA whose length is not its frames";
        sn_stream_data(s, u.data.pos, m + sizeof(struct snp_data), u.data.frames, now);
        return NULL;
    default:
        return "a mixer message from a PCM";
    }
}

static bool serve(struct sn_server *d, unsigned i, uint64_t now)
{
    struct sn_client *c = &d->cl[i];
    for (int k = 0; k < 64; k++) {
        ssize_t n = recv(c->fd, d->msg, SNP_MAX_MSG, MSG_DONTWAIT | MSG_TRUNC);
        if (n == 0) {
            drop_client(d, i, now, NULL);
            return false;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return true;
            drop_client(d, i, now, strerror(errno));
            return false;
        }
        if ((size_t)n > SNP_MAX_MSG) {
            drop_client(d, i, now, "a message over 64 KiB");
            return false;
        }
        const char *why = dispatch(d, c, d->msg, (size_t)n, now);
        if (why) {
            drop_client(d, i, now, why);
            return false;
        }
    }
    return true;
}

unsigned sn_server_pollfds(const struct sn_server *d, struct pollfd *p, unsigned max)
{
    unsigned n = 0;
    if (max == 0)
        return 0;
    p[n++] = (struct pollfd){.fd = d->lfd, .events = POLLIN};
    for (unsigned i = 0; i < d->ncl && n < max; i++)
        p[n++] = (struct pollfd){.fd = d->cl[i].fd, .events = POLLIN};
    return n;
}

void sn_server_events(struct sn_server *d, const struct pollfd *p, unsigned n, uint64_t now)
{
    if (n == 0)
        return;
    /* Clients first, by fd (dropping one moves another into its slot). */
    for (unsigned k = 1; k < n; k++) {
        if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        for (unsigned i = 0; i < d->ncl; i++)
            if (d->cl[i].fd == p[k].fd) {
                serve(d, i, now);
                break;
            }
    }
    if (p[0].revents & POLLIN)
        accept_all(d);
}

void sn_server_capture(void *arg, struct sn_stream *s, uint64_t pos, const uint8_t *data,
                       uint32_t frames)
{
    struct sn_server *d = arg;
    struct sn_client *c = s->client;
    if (!c || !s->fb)
        return;
    uint8_t *out = d->out;
    uint32_t per = (uint32_t)((SNP_MAX_MSG - sizeof(struct snp_data)) / s->fb);
    for (uint32_t k = 0; k < frames;) {
        uint32_t m = frames - k < per ? frames - k : per;
        struct snp_data h = {.h = {.type = SNP_DATA}, .pos = pos + k, .frames = m};
        memcpy(out, &h, sizeof(h));
        memcpy(out + sizeof(h), data + (size_t)k * s->fb, (size_t)m * s->fb);
        size_t len = sizeof(h) + (size_t)m * s->fb;
        if (send(c->fd, out, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
            if (errno != EAGAIN && errno != EPIPE)
                slog(d, SF_LOG_ERR, "client (pid %u): send: %m", c->pid);
            c->drops++; /* it does not read: that audio is lost to it, as on a card */
        }
        k += m;
    }
}
