/* wav.h - the little of RIFF/WAVE the sound instruments need: PCM and
 * WAVE_FORMAT_EXTENSIBLE headers in S16_LE, S24_LE (32-bit container) and S32_LE. */
#ifndef SND_WAV_H
#define SND_WAV_H

#include <stddef.h>
#include <stdint.h>

#include "framecode.h"

/* The header of a WAV file holding `frames` frames; returns its length (<= 80). */
size_t wav_header(unsigned char *out, enum snd_fmt f, unsigned channels, unsigned rate,
                  uint64_t frames);

struct wav_info {
    enum snd_fmt fmt;
    unsigned channels, rate;
    size_t data_off, data_len; /* the data chunk, clipped to the file */
};
/* Parses a WAV file held in memory; 0, or -1 with a reason in err. */
int wav_parse(const unsigned char *buf, size_t len, struct wav_info *w, char *err, size_t errlen);

#endif
