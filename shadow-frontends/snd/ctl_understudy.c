/* ctl_understudy.c - the guest's shadow mixer: an ALSA external control
 * plugin, libasound_module_ctl_understudy.so, through which amixer,
 * alsamixer and programs' mixers set the volume and mute of a virtual sound
 * card's streams. understudy-sndfront keeps them and gives them to every
 * backend it connects to, so a volume set survives the driver domain.
 *
 *   ctl.understudy { type understudy; card 0 }  (or socket "PATH"; sn_proto.h)
 *
 * Per stream of the card, a volume and a switch, named as ALSA mixers expect:
 * the first playback stream's are "PCM Playback Volume" and "PCM Playback
 * Switch" (amixer's 'PCM'), the first capture stream's "Capture Volume" and
 * "Capture Switch" ('Capture'); further streams of a direction have the same
 * names with element index 1, 2, ... in the card's stream order ('PCM',1).
 * The volume is 0..120, -60.00..0 dB in 0.5 dB steps (a dB TLV), 0 being
 * mute (sent as sndif's -200 dB, silence in every format), with as many
 * channels as the stream has; the switch is on = sounding.
 *
 * Nothing is cached: every read asks the daemon (another mixer may have
 * changed the values), every write reads then sets (VOL_GET, VOL_SET). No call
 * waits longer than SNP_REPLY_MS for the daemon. The daemon announces no
 * changes, so while events are subscribed (alsamixer) a timer compares the
 * values twice a second and reports the elements that changed, as a card's
 * driver would. A daemon that went away is reconnected on the next call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <alsa/asoundlib.h>
#include <alsa/control_external.h>
#include <alsa/sound/tlv.h>

#include "sn_plugconf.h"
#include "sn_proto.h"

#define VOL_STEPS   120     /* 0..120: -60.00..0 dB */
#define VOL_MIN_CDB (-6000) /* the TLV's unit: 0.01 dB */
#define VOL_STEP    50      /* 0.5 dB */
#define VOL_MUTED   -200000 /* step 0, in sndif's 0.001 dB: its lowest */
#define MAX_STREAMS 64u     /* more from the daemon makes no sense */
#define SCAN_MS     500u    /* events: how often the values are compared */

/* One stream's two elements: 2 * stream (volume) and 2 * stream + 1 (switch). */
struct ctl_stream {
    uint32_t pcm_device, capture, channels;
    unsigned index; /* the element index: streams of this direction before it */
    int seen;       /* events: vol and mute below are the last compared */
    struct snp_vol vol;
    int changed[2]; /* events: volume, switch to report */
};

struct ctlplug {
    snd_ctl_ext_t ext;
    char path[108];
    int sock, tfd;
    uint32_t seq;
    uint64_t until; /* the ALSA call in progress waits for the daemon until then */
    unsigned nst;
    struct ctl_stream *st;
    int gone; /* the daemon closed the socket: said once */
};

static const unsigned int db_tlv[] = {SNDRV_CTL_TLVD_DB_SCALE_ITEM(VOL_MIN_CDB, VOL_STEP, 1)};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the daemon ---- */

/* An ALSA call starts: whatever it asks the daemon, it waits SNP_REPLY_MS at most. */
static void begin(struct ctlplug *u)
{
    u->until = now_ns() + (uint64_t)SNP_REPLY_MS * 1000000u;
}

static void lost_daemon(struct ctlplug *u, const char *what, int e)
{
    if (!u->gone)
        SNDERR("understudy: %s: understudy-sndfront is gone (%s)", what, strerror(e));
    u->gone = 1;
    if (u->sock >= 0)
        close(u->sock);
    u->sock = -1;
}

/* Send m (its seq set here) and wait for the answer of type rtype and length
 * rlen with the same seq; answers to questions given up on are skipped.
 * 0 or -errno. */
static int ask(struct ctlplug *u, void *m, size_t len, uint32_t rtype, void *r, size_t rlen,
               const char *what)
{
    struct snp_hdr *h = m;
    h->seq = ++u->seq;
    if (u->sock < 0)
        return -EIO;
    if (send(u->sock, m, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
        int e = errno;
        if (e == EAGAIN) {
            SNDERR("understudy: %s: understudy-sndfront does not take requests", what);
            return -EIO;
        }
        lost_daemon(u, what, e);
        return -EIO;
    }
    uint64_t end = u->until;
    union {
        struct snp_hdr h;
        struct snp_vol vol;
        struct snp_reply reply;
        uint8_t raw[sizeof(struct snp_vol) + 1];
    } in;
    for (;;) {
        uint64_t now = now_ns();
        if (now >= end) {
            SNDERR("understudy: %s: no answer from understudy-sndfront in %u ms", what,
                   SNP_REPLY_MS);
            return -ETIMEDOUT;
        }
        struct pollfd p = {.fd = u->sock, .events = POLLIN};
        if (poll(&p, 1, (int)((end - now) / 1000000u) + 1) < 0 && errno != EINTR)
            return -errno;
        ssize_t n = recv(u->sock, &in, sizeof(in), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0) {
            lost_daemon(u, what, n == 0 ? ECONNRESET : errno);
            return -EIO;
        }
        if ((size_t)n < sizeof(in.h) ||
            (in.h.type != SNP_VOL && in.h.type != SNP_REPLY)) { /* nothing a mixer is sent */
            SNDERR("understudy: %s: an answer that makes no sense", what);
            lost_daemon(u, what, EPROTO);
            return -EPROTO;
        }
        if (in.h.seq != h->seq)
            continue; /* an answer to a question given up on */
        if (in.h.type != rtype || (size_t)n != rlen) {
            SNDERR("understudy: %s: an answer of the wrong type or length", what);
            return -EPROTO;
        }
        memcpy(r, &in, rlen);
        return 0;
    }
}

/* Connect and say HELLO; the card's stream count in *streams. 0 or -errno. */
static int connect_daemon(struct ctlplug *u, uint32_t *streams)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(u->path) >= sizeof(a.sun_path)) {
        SNDERR("understudy: socket path %s too long", u->path);
        return -EINVAL;
    }
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", u->path);
    /* Non-blocking: a daemon that stopped accepting is waited for SNP_REPLY_MS
     * at most (a unix socket's connect says EAGAIN while its backlog is full). */
    u->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int c = u->sock < 0 ? -1 : connect(u->sock, (struct sockaddr *)&a, sizeof(a));
    while (c < 0 && u->sock >= 0 && errno == EAGAIN && now_ns() < u->until) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
        c = connect(u->sock, (struct sockaddr *)&a, sizeof(a));
    }
    if (c < 0) {
        int e = errno;
        if (!u->gone)
            SNDERR("understudy: connect %s: %s (is understudy-sndfront running?)", u->path,
                   strerror(e));
        if (u->sock >= 0)
            close(u->sock);
        u->sock = -1;
        return -e;
    }
    struct snp_hello h = {.h = {.type = SNP_HELLO},
                          .version = SNP_VERSION,
                          .role = SNP_ROLE_CTL,
                          .pid = (uint32_t)getpid()};
    struct snp_reply r;
    int e = ask(u, &h, sizeof(h), SNP_REPLY, &r, sizeof(r), "open");
    if (e == 0 && r.status < 0)
        e = r.status;
    if (e < 0) {
        if (u->sock >= 0)
            close(u->sock);
        u->sock = -1;
        return e;
    }
    *streams = r.streams;
    u->gone = 0;
    return 0;
}

/* The stream's volume and mute now. 0 or -errno. */
static int vol_get(struct ctlplug *u, unsigned stream, struct snp_vol *v)
{
    if (u->sock < 0) { /* the daemon went away: it may be back */
        uint32_t n;
        if (connect_daemon(u, &n) < 0)
            return -EIO;
        if (n != u->nst) {
            SNDERR("understudy: the card now has %u streams, not %u: reopen the mixer", n, u->nst);
            lost_daemon(u, "reconnect", ENODEV);
            return -ENODEV;
        }
    }
    struct snp_vol_ask q = {.h = {.type = SNP_VOL_GET}, .stream = stream};
    int e = ask(u, &q, sizeof(q), SNP_VOL, v, sizeof(*v), "volume");
    if (e < 0)
        return e;
    if (v->status < 0) {
        SNDERR("understudy: stream %u: %s", stream, strerror(-v->status));
        return v->status;
    }
    if (v->stream != stream || v->channels < 1 || v->channels > SNP_MAX_CHANNELS) {
        SNDERR("understudy: stream %u: the daemon's volume makes no sense", stream);
        return -EPROTO;
    }
    if (u->st) {
        const struct ctl_stream *s = &u->st[stream];
        if (v->pcm_device != s->pcm_device || (v->capture != 0) != s->capture ||
            v->channels != s->channels) {
            SNDERR("understudy: stream %u is not what it was: reopen the mixer", stream);
            return -ENODEV;
        }
    }
    return 0;
}

static int vol_set(struct ctlplug *u, struct snp_vol *v)
{
    struct snp_reply r;
    v->h.type = SNP_VOL_SET;
    int e = ask(u, v, sizeof(*v), SNP_REPLY, &r, sizeof(r), "set volume");
    if (e < 0)
        return e;
    if (r.status < 0)
        SNDERR("understudy: stream %u: volume refused: %s", v->stream, strerror(-r.status));
    return r.status < 0 ? r.status : 0;
}

/* ---- 0.001 dB and the control's steps ---- */

static long milli_to_step(int32_t m)
{
    int64_t x = (int64_t)m - VOL_MIN_CDB * 10 + VOL_STEP * 5; /* rounded to the nearest step */
    if (x < 0)
        return 0;
    x /= VOL_STEP * 10;
    return x > VOL_STEPS ? VOL_STEPS : (long)x;
}

static int32_t step_to_milli(long k)
{
    return k <= 0 ? VOL_MUTED : (int32_t)(VOL_MIN_CDB * 10 + k * VOL_STEP * 10);
}

/* ---- the elements ---- */

/* Element k's name (its stream's is k / 2): as ALSA's simple mixer groups them. */
static const char *elem_name(const struct ctlplug *u, unsigned k)
{
    int sw = k % 2;
    if (u->st[k / 2].capture)
        return sw ? "Capture Switch" : "Capture Volume";
    return sw ? "PCM Playback Switch" : "PCM Playback Volume";
}

static int un_elem_count(snd_ctl_ext_t *ext)
{
    struct ctlplug *u = ext->private_data;
    return (int)(2 * u->nst);
}

static int un_elem_list(snd_ctl_ext_t *ext, unsigned int offset, snd_ctl_elem_id_t *id)
{
    struct ctlplug *u = ext->private_data;
    if (offset >= 2 * u->nst)
        return -EINVAL;
    snd_ctl_elem_id_set_numid(id, offset + 1);
    snd_ctl_elem_id_set_interface(id, SND_CTL_ELEM_IFACE_MIXER);
    snd_ctl_elem_id_set_name(id, elem_name(u, offset));
    snd_ctl_elem_id_set_index(id, u->st[offset / 2].index);
    return 0;
}

static snd_ctl_ext_key_t un_find_elem(snd_ctl_ext_t *ext, const snd_ctl_elem_id_t *id)
{
    struct ctlplug *u = ext->private_data;
    unsigned numid = snd_ctl_elem_id_get_numid(id);
    if (numid > 0)
        return numid <= 2 * u->nst ? numid - 1 : SND_CTL_EXT_KEY_NOT_FOUND;
    if (snd_ctl_elem_id_get_interface(id) != SND_CTL_ELEM_IFACE_MIXER)
        return SND_CTL_EXT_KEY_NOT_FOUND;
    const char *name = snd_ctl_elem_id_get_name(id);
    unsigned index = snd_ctl_elem_id_get_index(id);
    for (unsigned k = 0; k < 2 * u->nst; k++)
        if (u->st[k / 2].index == index && !strcmp(elem_name(u, k), name))
            return k;
    return SND_CTL_EXT_KEY_NOT_FOUND;
}

static int un_get_attribute(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, int *type, unsigned int *acc,
                            unsigned int *count)
{
    struct ctlplug *u = ext->private_data;
    if (key >= 2 * u->nst)
        return -EINVAL;
    int sw = key % 2;
    *type = sw ? SND_CTL_ELEM_TYPE_BOOLEAN : SND_CTL_ELEM_TYPE_INTEGER;
    *acc = SND_CTL_EXT_ACCESS_READWRITE | (sw ? 0 : SND_CTL_EXT_ACCESS_TLV_READ);
    *count = u->st[key / 2].channels;
    return 0;
}

static int un_get_integer_info(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *imin, long *imax,
                               long *istep)
{
    struct ctlplug *u = ext->private_data;
    if (key >= 2 * u->nst || key % 2)
        return -EINVAL;
    *imin = 0;
    *imax = VOL_STEPS;
    *istep = 1;
    return 0;
}

static int un_read_integer(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value)
{
    struct ctlplug *u = ext->private_data;
    if (key >= 2 * u->nst)
        return -EINVAL;
    struct snp_vol v;
    begin(u);
    int e = vol_get(u, (unsigned)(key / 2), &v);
    if (e < 0)
        return e;
    for (unsigned c = 0; c < v.channels; c++)
        value[c] = key % 2 ? !v.mute[c] : milli_to_step(v.vol[c]);
    return 0;
}

/* 1 if a value changed, 0 if not, or -errno (a value out of range: -EINVAL,
 * as a card's driver refuses it). */
static int un_write_integer(snd_ctl_ext_t *ext, snd_ctl_ext_key_t key, long *value)
{
    struct ctlplug *u = ext->private_data;
    if (key >= 2 * u->nst)
        return -EINVAL;
    int sw = key % 2;
    unsigned stream = (unsigned)(key / 2);
    for (unsigned c = 0; c < u->st[stream].channels; c++)
        if (value[c] < 0 || value[c] > (sw ? 1 : VOL_STEPS)) {
            SNDERR("understudy: %s %u: %ld is out of range (0..%d)", sw ? "switch" : "volume",
                   u->st[stream].index, value[c], sw ? 1 : VOL_STEPS);
            return -EINVAL;
        }
    /* The other element's values as they are now (another mixer may set
     * them between this read and the set: the later writer wins). */
    struct snp_vol v;
    begin(u);
    int e = vol_get(u, stream, &v);
    if (e < 0)
        return e;
    int changed = 0;
    for (unsigned c = 0; c < v.channels; c++) {
        if (sw) {
            changed |= v.mute[c] != !value[c];
            v.mute[c] = !value[c];
        } else if (milli_to_step(v.vol[c]) != value[c]) {
            /* A step already shown keeps its exact value. */
            v.vol[c] = step_to_milli(value[c]);
            changed = 1;
        }
    }
    if (!changed)
        return 0;
    e = vol_set(u, &v);
    return e < 0 ? e : 1;
}

/* ---- events: what changed since the last look ---- */

static void un_subscribe_events(snd_ctl_ext_t *ext, int subscribe)
{
    struct ctlplug *u = ext->private_data;
    struct itimerspec its = {0};
    if (subscribe) {
        its.it_value.tv_nsec = (long)SCAN_MS * 1000000;
        its.it_interval = its.it_value;
        for (unsigned i = 0; i < u->nst; i++)
            u->st[i].seen = 0;
    }
    timerfd_settime(u->tfd, 0, &its, NULL);
}

static void scan(struct ctlplug *u)
{
    begin(u);
    for (unsigned i = 0; i < u->nst; i++) {
        struct ctl_stream *s = &u->st[i];
        struct snp_vol v;
        if (vol_get(u, i, &v) < 0)
            return;
        if (s->seen) {
            s->changed[0] |= memcmp(v.vol, s->vol.vol, sizeof(v.vol)) != 0;
            s->changed[1] |= memcmp(v.mute, s->vol.mute, sizeof(v.mute)) != 0;
        }
        s->vol = v;
        s->seen = 1;
    }
}

static int un_read_event(snd_ctl_ext_t *ext, snd_ctl_elem_id_t *id, unsigned int *event_mask)
{
    struct ctlplug *u = ext->private_data;
    if (!ext->subscribed)
        return -EAGAIN;
    uint64_t ticks = 0;
    if (read(u->tfd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks) && ticks)
        scan(u);
    for (unsigned k = 0; k < 2 * u->nst; k++) {
        struct ctl_stream *s = &u->st[k / 2];
        if (!s->changed[k % 2])
            continue;
        s->changed[k % 2] = 0;
        un_elem_list(ext, k, id);
        *event_mask = SND_CTL_EVENT_MASK_VALUE;
        return 1;
    }
    return -EAGAIN;
}

static void ctlplug_free(struct ctlplug *u)
{
    if (!u)
        return;
    if (u->sock >= 0)
        close(u->sock);
    if (u->tfd >= 0)
        close(u->tfd);
    free(u->st);
    free(u);
}

static void un_close(snd_ctl_ext_t *ext)
{
    ctlplug_free(ext->private_data);
}

static const snd_ctl_ext_callback_t un_ops = {
    .close = un_close,
    .elem_count = un_elem_count,
    .elem_list = un_elem_list,
    .find_elem = un_find_elem,
    .get_attribute = un_get_attribute,
    .get_integer_info = un_get_integer_info,
    .read_integer = un_read_integer,
    .write_integer = un_write_integer,
    .subscribe_events = un_subscribe_events,
    .read_event = un_read_event,
};

/* ---- the plugin ---- */

/* The card's streams as the daemon says: direction, channels, element index. */
static int learn_streams(struct ctlplug *u, uint32_t n)
{
    if (n > MAX_STREAMS) {
        SNDERR("understudy: the daemon says the card has %u streams", n);
        return -EPROTO;
    }
    struct ctl_stream *st = calloc(n ? n : 1, sizeof(*st));
    if (!st)
        return -ENOMEM;
    unsigned idx[2] = {0, 0};
    for (unsigned i = 0; i < n; i++) {
        struct snp_vol v;
        int e = vol_get(u, i, &v);
        if (e < 0) {
            free(st);
            return e;
        }
        st[i].pcm_device = v.pcm_device;
        st[i].capture = v.capture != 0;
        st[i].channels = v.channels;
        st[i].index = idx[st[i].capture]++;
    }
    u->st = st;
    u->nst = n;
    return 0;
}

SND_CTL_PLUGIN_DEFINE_FUNC(understudy)
{
    (void)root;
    long card = 0;
    struct ctlplug *u = calloc(1, sizeof(*u));
    if (!u)
        return -ENOMEM;
    u->sock = u->tfd = -1;
    int err = sn_plugconf(conf, u->path, sizeof(u->path), &card, NULL);
    if (err < 0)
        goto fail;
    uint32_t n;
    begin(u);
    err = connect_daemon(u, &n);
    if (err < 0)
        goto fail;
    err = learn_streams(u, n);
    if (err < 0)
        goto fail;
    u->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (u->tfd < 0) {
        err = -errno;
        SNDERR("understudy: timerfd_create: %s", strerror(errno));
        goto fail;
    }
    u->ext.version = SND_CTL_EXT_VERSION;
    u->ext.card_idx = (int)card;
    snprintf(u->ext.id, sizeof(u->ext.id), "Understudy");
    snprintf(u->ext.driver, sizeof(u->ext.driver), "understudy");
    snprintf(u->ext.name, sizeof(u->ext.name), "Understudy vsnd");
    snprintf(u->ext.longname, sizeof(u->ext.longname), "Understudy shadow sound card (%.48s)",
             u->path);
    snprintf(u->ext.mixername, sizeof(u->ext.mixername), "Understudy software volume");
    u->ext.poll_fd = u->tfd;
    u->ext.callback = &un_ops;
    u->ext.private_data = u;
    u->ext.tlv.p = db_tlv;
    err = snd_ctl_ext_create(&u->ext, name, mode);
    if (err < 0)
        goto fail;
    *handlep = u->ext.handle;
    return 0;
fail:
    ctlplug_free(u);
    return err;
}

SND_CTL_PLUGIN_SYMBOL(understudy);
