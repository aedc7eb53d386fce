/* sn_proto.h - what the guest's ALSA plugins (pcm_understudy.c,
 * ctl_understudy.c) and the shadow sndfront daemon (understudy-sndfront)
 * say to each other over the daemon's unix socket (SOCK_SEQPACKET: one
 * message a packet, its length the packet's). The daemon owns the card's
 * sndif connection; a plugin is one program's PCM stream, or its mixer.
 *
 * Every message starts with struct snp_hdr. A PCM client says HELLO with the
 * PCM device and direction it wants and gets CAPS (what the card allows); it
 * then sends HW_PARAMS and PREPARE (each answered by REPLY), and START,
 * STOP, PAUSE and DATA (never answered: the program's clock runs in the
 * plugin and never waits for the daemon). Capture DATA flows back. A mixer
 * client says HELLO with SNP_ROLE_CTL and then VOL_GET / VOL_SET.
 *
 * Positions are frames since the stream was prepared; times are
 * CLOCK_MONOTONIC ns, the same clock in the plugin and the daemon (one
 * guest). Every field from the peer is checked before use: the daemon does
 * not trust a program, nor a program the daemon.
 */
#ifndef SN_PROTO_H
#define SN_PROTO_H

#include <stdint.h>

#define SNP_VERSION        1u
#define SNP_MAX_MSG        (64u << 10) /* the largest packet either side sends */
#define SNP_MAX_CHANNELS   8u          /* channels a stream of ours may have */
#define SNP_MAX_RATES      32u
#define SNP_REPLY_MS       2000u                          /* a plugin waits this long for a REPLY */
#define SNP_DEFAULT_SOCKET "/run/understudy/vsnd-%u.sock" /* %u: the vsnd device id */

enum snp_type {
    SNP_HELLO = 1, /* c->d: snp_hello; answered by CAPS (pcm) or REPLY (ctl) */
    SNP_CAPS,      /* d->c: snp_caps */
    SNP_HW_PARAMS, /* c->d: snp_hw_params; REPLY */
    SNP_PREPARE,   /* c->d: hdr only; REPLY. Positions restart at 0 */
    SNP_START,     /* c->d: snp_clock (the tick-0 time and position) */
    SNP_STOP,      /* c->d: snp_stop */
    SNP_PAUSE,     /* c->d: snp_pause */
    SNP_DATA,      /* c->d playback, d->c capture: snp_data, then the frames */
    SNP_VOL_GET,   /* c->d (ctl): snp_vol_ask; answered by VOL */
    SNP_VOL_SET,   /* c->d (ctl): snp_vol; REPLY */
    SNP_VOL,       /* d->c: snp_vol */
    SNP_REPLY,     /* d->c: snp_reply */
};

enum snp_role { SNP_ROLE_PCM = 1, SNP_ROLE_CTL = 2 };

struct snp_hdr {
    uint32_t type;
    uint32_t seq; /* a REPLY carries the seq of what it answers */
};

struct snp_hello {
    struct snp_hdr h;
    uint32_t version;
    uint32_t role;
    uint32_t pcm_device; /* PCM: the card's PCM device <pcm> */
    uint32_t capture;    /* PCM: 1 capture, 0 playback */
    uint32_t pid;        /* for the daemon's log */
};

/* What the stream allows: the card's settings for it, less what the daemon
 * keeps for itself (buffer_max leaves room for the volume values). */
struct snp_caps {
    struct snp_hdr h;
    int32_t status; /* 0, or -errno: no such stream, busy */
    uint32_t stream;
    uint32_t nr_rates;
    uint32_t rates[SNP_MAX_RATES];
    uint64_t formats; /* 1 << XENSND_PCM_FORMAT_* */
    uint32_t ch_min, ch_max;
    uint32_t buffer_max; /* octets */
    char name[64];       /* unique-id, for the plugin's name */
};

struct snp_hw_params {
    struct snp_hdr h;
    uint32_t rate;
    uint32_t format; /* XENSND_PCM_FORMAT_* */
    uint32_t channels;
    uint32_t buffer_frames;
    uint32_t period_frames;
};

/* START: tick 0 of the stream's clock fell at t0_ns at position pos. */
struct snp_clock {
    struct snp_hdr h;
    uint64_t t0_ns;
    uint64_t pos;
};

struct snp_stop {
    struct snp_hdr h;
    uint32_t drain; /* 1: after a drain: play what was sent, then stop */
    uint32_t pad;
    uint64_t pos; /* the clock's position at the stop */
};

/* PAUSE on (the clock stops at t_ns) or off (it runs again from t_ns). */
struct snp_pause {
    struct snp_hdr h;
    uint32_t on;
    uint32_t pad;
    uint64_t t_ns;
};

struct snp_data {
    struct snp_hdr h;
    uint64_t pos;    /* of the first frame */
    uint32_t frames; /* the frames follow, interleaved */
    uint32_t pad;
};

struct snp_vol_ask {
    struct snp_hdr h;
    uint32_t stream;
};

/* Volume in 0.001 dB per channel (sndif's unit) and mute per channel. */
struct snp_vol {
    struct snp_hdr h;
    int32_t status; /* VOL: 0 or -errno */
    uint32_t stream;
    uint32_t pcm_device, capture; /* VOL: the stream's device and direction */
    uint32_t channels;            /* how many of vol[] and mute[] count */
    int32_t vol[SNP_MAX_CHANNELS];
    uint8_t mute[SNP_MAX_CHANNELS];
};

struct snp_reply {
    struct snp_hdr h;
    int32_t status;   /* 0 or -errno */
    uint32_t streams; /* HELLO (ctl): the card's streams */
};

#endif
