/* snd_card.h - a virtual sound card as the toolstack describes it in the
 * frontend's dir, read once for both ends of sndif: sndback serves it and
 * the shadow sndfront offers it to the guest's programs.
 *
 * libxl writes an xl vsnd= line there (sndif.h "Card configuration";
 * libxl_vsnd.c): the card, then PCM devices <pcm>/, then their streams
 * <pcm>/<stream>/, each level optionally with sample-rates, sample-formats,
 * channels-min/max and buffer-size. A level inherits what it does not set
 * and may only narrow what it does (sndif.h: "the underlying layer must be a
 * subset of the upper layer"). The guest can write that dir: every value is
 * checked as peer input.
 *
 * Errors follow common/README.md: -1 with errno, and a message naming the key
 * and the value in the caller's buffer (the caller logs it once).
 */
#ifndef UNDERSTUDY_SND_CARD_H
#define UNDERSTUDY_SND_CARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xenstore.h>

#define SNDC_MAX_PCMS     8u  /* PCM devices per card */
#define SNDC_MAX_STREAMS  16u /* streams per card, all devices together */
#define SNDC_MAX_RATES    32u
#define SNDC_MAX_CHANNELS 64u
#define SNDC_MAX_RATE     768000u
/* The largest shared buffer a stream may have (buffer-size): 16 MiB. */
#define SNDC_MAX_BUFFER (16u << 20)
/* buffer-size when no level sets it. */
#define SNDC_DEFAULT_BUFFER (256u << 10)
/* The sndif formats (XENSND_PCM_FORMAT_*) there are: bits of a mask. */
#define SNDC_NR_FORMATS    25u
#define SNDC_UNIQUE_ID_MAX 128u /* bytes with the NUL */

/* One level's (or a stream's effective) PCM settings. */
struct sndc_params {
    uint32_t rates[SNDC_MAX_RATES];
    unsigned nr_rates;
    uint64_t formats; /* 1 << XENSND_PCM_FORMAT_* */
    unsigned ch_min, ch_max;
    uint32_t buffer_size; /* octets, the largest buffer */
};

struct sndc_stream {
    unsigned pcm_idx, idx; /* <pcm>/<idx> under the frontend's dir */
    char dir[160];         /* the frontend's stream dir */
    char unique_id[SNDC_UNIQUE_ID_MAX];
    bool capture;
    struct sndc_params p; /* effective: inherited and narrowed */
};

struct sndc_card {
    char short_name[33], long_name[81];
    unsigned nr_pcms;
    unsigned nr_streams;
    struct sndc_stream st[SNDC_MAX_STREAMS];
};

/* Read the card under fe (the frontend's device dir). 0; -1 with errno and
 * msg filled ("<dir>/<key> '<value>': <why>"). */
int sndc_read(struct xs_handle *xs, const char *fe, struct sndc_card *card, char *msg, size_t len);

/* The sndif formats: the xenstore name of XENSND_PCM_FORMAT_* f ("?" if
 * none), its number for a name (-1 if unknown), and the octets of one sample
 * (0: no fixed sample size, as mpeg, gsm and ima_adpcm). */
const char *sndc_format_name(unsigned f);
int sndc_format_parse(const char *s);
unsigned sndc_format_bytes(unsigned f);

/* Is rate one of p's rates? */
bool sndc_has_rate(const struct sndc_params *p, uint32_t rate);

#endif
