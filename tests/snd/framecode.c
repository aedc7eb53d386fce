/* framecode.c - the frame-counter test signal; the layout is in framecode.h. */
#define _GNU_SOURCE
#include "framecode.h"

#include <string.h>
#include <strings.h>

static const char *const fmt_names[SND_FMT_COUNT] = {"S16_LE", "S24_LE", "S32_LE"};

const char *snd_fmt_name(enum snd_fmt f)
{
    return (unsigned)f < SND_FMT_COUNT ? fmt_names[f] : NULL;
}

int snd_fmt_parse(const char *s)
{
    for (int i = 0; i < SND_FMT_COUNT; i++)
        if (!strcasecmp(s, fmt_names[i]) || (!strncasecmp(s, fmt_names[i], 3) && s[3] == '\0'))
            return i;
    return -1;
}

unsigned snd_fmt_bytes(enum snd_fmt f)
{
    return f == SND_FMT_S16_LE ? 2 : 4;
}

unsigned snd_fmt_bits(enum snd_fmt f)
{
    return f == SND_FMT_S16_LE ? 16 : f == SND_FMT_S24_LE ? 24 : 32;
}

void snd_put_sample(enum snd_fmt f, void *p, uint32_t left)
{
    unsigned char *b = p;
    switch (f) {
    case SND_FMT_S16_LE:
        b[0] = left >> 16, b[1] = left >> 24;
        break;
    case SND_FMT_S24_LE: /* sign-extended into the container's top byte */
        b[0] = left >> 8, b[1] = left >> 16, b[2] = left >> 24;
        b[3] = (left & 0x80000000u) ? 0xff : 0;
        break;
    default:
        b[0] = left, b[1] = left >> 8, b[2] = left >> 16, b[3] = left >> 24;
        break;
    }
}

uint32_t snd_get_sample(enum snd_fmt f, const void *p)
{
    const unsigned char *b = p;
    switch (f) {
    case SND_FMT_S16_LE:
        return (uint32_t)b[0] << 16 | (uint32_t)b[1] << 24;
    case SND_FMT_S24_LE:
        return (uint32_t)b[0] << 8 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 24;
    default:
        return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    }
}

/* Small multiplicative hashes; the constants make an all-zero word invalid. */
static uint32_t chk3(uint32_t top13)
{
    return ((top13 * 0x9e3779b1u) >> 29) ^ 5u;
}

static uint32_t chk8(uint32_t top24)
{
    return ((top24 * 0x85ebca6bu) >> 24) ^ 0xa5u;
}

static unsigned side_bit(uint32_t n)
{
    return (n >> 5) >> (n & 31) & 1u;
}

uint32_t fc_word(uint32_t n, unsigned c)
{
    uint32_t top = (c & 7u) << 10 | (n & 0x1ffu) << 1 | side_bit(n); /* bits 31..19 */
    uint32_t w = top << 19 | chk3(top) << 16 | ((n >> 9) & 0xffu) << 8;
    return w | chk8(w >> 8);
}

uint32_t fc_modulus(unsigned bits)
{
    return bits >= 24 ? 1u << 17 : 1u << 9;
}

struct fc_sample fc_decode(uint32_t left, unsigned bits)
{
    struct fc_sample s = {0};
    uint32_t top = left >> 19;
    if (((left >> 16) & 7u) != chk3(top))
        return s;
    if (bits >= 32 && (left & 0xffu) != chk8(left >> 8))
        return s;
    s.valid = 1;
    s.chan = top >> 10;
    s.side = top & 1u;
    s.low = (top >> 1) & 0x1ffu;
    if (bits >= 24)
        s.low |= ((left >> 8) & 0xffu) << 9;
    return s;
}

void fc_fill(enum snd_fmt f, unsigned channels, uint32_t n, size_t count, void *buf)
{
    unsigned char *p = buf;
    unsigned sb = snd_fmt_bytes(f);
    for (size_t i = 0; i < count; i++)
        for (unsigned c = 0; c < channels; c++, p += sb)
            snd_put_sample(f, p, fc_word(n + (uint32_t)i, c));
}
