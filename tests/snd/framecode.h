/* framecode.h - the frame-counter test signal and the sample formats the sound
 * instruments handle (S16_LE, S24_LE, S32_LE).
 *
 * Every sample of frame n, channel c is one 32-bit code word W(n, c), stored
 * left-aligned: S32_LE keeps all 32 bits, S24_LE (24 bits in the low three
 * bytes of a 32-bit container) keeps bits 31..8, S16_LE keeps bits 31..16. So
 * a signal made at 32 bits and narrowed by ALSA's plug layer still decodes.
 *
 *   bits 31..29  channel index c (0-7)
 *   bits 28..20  n mod 512                    (the low counter)
 *   bit  19      one bit of n >> 5: bit (n mod 32) of it (see below)
 *   bits 18..16  check over bits 31..19
 *   bits 15..8   (n >> 9) mod 256              (24 and 32 bits only)
 *   bits  7..0   check over bits 31..8        (32 bits only)
 *
 * The low counter finds a dropped, repeated or reordered frame at once; it
 * wraps every 512 frames (2^17 at 24 or 32 bits), so a decoder resolves the
 * whole frame number from the side bits: the 32 frames of block b = n >> 5
 * carry the 32 bits of b, one per frame, so any run of 63 frames or more holds
 * a complete block and names its frame numbers exactly; a loss or repeat of
 * a multiple of the modulus (a whole 512- or 1024-frame period) shows as a
 * block naming other numbers than the one before it: its length is exact, its
 * place known to within a block. An all-zero sample is
 * never a valid word (the checks see to that): zero is silence.
 */
#ifndef SND_FRAMECODE_H
#define SND_FRAMECODE_H

#include <stddef.h>
#include <stdint.h>

enum snd_fmt { SND_FMT_S16_LE, SND_FMT_S24_LE, SND_FMT_S32_LE, SND_FMT_COUNT };

/* "S16_LE" etc.; NULL for a bad value. */
const char *snd_fmt_name(enum snd_fmt f);
/* Parses a format name (case-insensitive; "S16", "S24", "S32" also); -1 if unknown. */
int snd_fmt_parse(const char *s);
/* Bytes per sample in memory (2 or 4) and meaningful bits (16, 24, 32). */
unsigned snd_fmt_bytes(enum snd_fmt f);
unsigned snd_fmt_bits(enum snd_fmt f);

/* Stores / loads one sample as a left-aligned 32-bit value. */
void snd_put_sample(enum snd_fmt f, void *p, uint32_t left);
uint32_t snd_get_sample(enum snd_fmt f, const void *p);

/* The code word of frame n, channel c (c < 8). */
uint32_t fc_word(uint32_t n, unsigned c);

/* What one sample says. */
struct fc_sample {
    int valid;     /* checks passed */
    unsigned chan; /* channel index it carries */
    uint32_t low;  /* n mod fc_modulus(bits) */
    unsigned side; /* its side bit */
};
/* Decodes a left-aligned sample of the given width (16, 24 or 32). */
struct fc_sample fc_decode(uint32_t left, unsigned bits);
/* The low counter's modulus at a width: 512 or 131072. */
uint32_t fc_modulus(unsigned bits);
/* Writes frames [n, n + count) of the signal, interleaved, into buf. */
void fc_fill(enum snd_fmt f, unsigned channels, uint32_t n, size_t count, void *buf);

#endif
