/* wav.c - write and parse the WAV headers of the sound instruments. */
#define _GNU_SOURCE
#include "wav.h"

#include <stdio.h>
#include <string.h>

static void le16(unsigned char *p, unsigned v)
{
    p[0] = v & 0xff, p[1] = (v >> 8) & 0xff;
}

static void le32(unsigned char *p, uint32_t v)
{
    p[0] = v & 0xff, p[1] = (v >> 8) & 0xff, p[2] = (v >> 16) & 0xff, p[3] = v >> 24;
}

static unsigned rd16(const unsigned char *p)
{
    return p[0] | p[1] << 8;
}

static uint32_t rd32(const unsigned char *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t wav_header(unsigned char *out, enum snd_fmt f, unsigned channels, unsigned rate,
                  uint64_t frames)
{
    /* 24-bit samples in 32-bit containers need the extensible form to say so. */
    int ext = f == SND_FMT_S24_LE;
    unsigned bytes = snd_fmt_bytes(f), fmt_len = ext ? 40 : 16;
    uint64_t data = frames * channels * bytes;
    uint32_t data32 = data > 0xffffffffu - 80 ? 0xffffffffu - 80 : (uint32_t)data;
    unsigned char *p = out;

    memcpy(p, "RIFF", 4);
    le32(p + 4, data32 + 4 + 8 + fmt_len + 8);
    memcpy(p + 8, "WAVEfmt ", 8);
    le32(p + 16, fmt_len);
    le16(p + 20, ext ? 0xfffe : 1);
    le16(p + 22, channels);
    le32(p + 24, rate);
    le32(p + 28, rate * channels * bytes);
    le16(p + 32, channels * bytes);
    le16(p + 34, bytes * 8);
    p += 36;
    if (ext) {
        static const unsigned char pcm_guid[16] = {1,    0, 0, 0,    0, 0,    0x10, 0,
                                                   0x80, 0, 0, 0xaa, 0, 0x38, 0x9b, 0x71};
        le16(p, 22);
        le16(p + 2, snd_fmt_bits(f));
        le32(p + 4, 0); /* channel mask: unspecified */
        memcpy(p + 8, pcm_guid, 16);
        p += 24;
    }
    memcpy(p, "data", 4);
    le32(p + 4, data32);
    return (size_t)(p + 8 - out);
}

int wav_parse(const unsigned char *buf, size_t len, struct wav_info *w, char *err, size_t errlen)
{
    size_t off = 12;
    int have_fmt = 0;

    if (len < 12 || memcmp(buf, "RIFF", 4) || memcmp(buf + 8, "WAVE", 4)) {
        snprintf(err, errlen, "not a RIFF/WAVE file");
        return -1;
    }
    while (off + 8 <= len) {
        uint32_t clen = rd32(buf + off + 4);
        const unsigned char *c = buf + off + 8;
        if (!memcmp(buf + off, "fmt ", 4)) {
            if (clen < 16 || off + 8 + clen > len) {
                snprintf(err, errlen, "short fmt chunk");
                return -1;
            }
            unsigned tag = rd16(c), bits = rd16(c + 14), valid = bits;
            w->channels = rd16(c + 2);
            w->rate = rd32(c + 4);
            if (tag == 0xfffe && clen >= 24)
                valid = rd16(c + 18);
            else if (tag != 1) {
                snprintf(err, errlen, "WAV format tag 0x%x is not PCM", tag);
                return -1;
            }
            if (bits == 16 && valid == 16)
                w->fmt = SND_FMT_S16_LE;
            else if (bits == 32 && valid == 24)
                w->fmt = SND_FMT_S24_LE;
            else if (bits == 32 && valid == 32)
                w->fmt = SND_FMT_S32_LE;
            else {
                snprintf(err, errlen, "WAV sample format %u bits (%u valid) not supported", bits,
                         valid);
                return -1;
            }
            if (w->channels < 1 || w->channels > 8 || w->rate == 0) {
                snprintf(err, errlen, "WAV with %u channels at %u Hz not supported", w->channels,
                         w->rate);
                return -1;
            }
            have_fmt = 1;
        } else if (!memcmp(buf + off, "data", 4)) {
            if (!have_fmt) {
                snprintf(err, errlen, "WAV data chunk before its fmt chunk");
                return -1;
            }
            w->data_off = off + 8;
            /* A writer that was cut short leaves a length past the end. */
            w->data_len = clen > len - w->data_off ? len - w->data_off : clen;
            return 0;
        }
        off += 8 + clen + (clen & 1);
    }
    snprintf(err, errlen, "no %s chunk", have_fmt ? "data" : "fmt");
    return -1;
}
