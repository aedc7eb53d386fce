/* snd_alsa.h - the sndif sample formats as ALSA names them, for the ends of
 * sndif that are ALSA programs (sndback, the shadow PCM plugin). A header of
 * its own so that libunderstudy-common needs no ALSA headers. */
#ifndef UNDERSTUDY_SND_ALSA_H
#define UNDERSTUDY_SND_ALSA_H

#include <alsa/asoundlib.h>
#include <xen/io/sndif.h>

/* ALSA's format for XENSND_PCM_FORMAT_* f; SND_PCM_FORMAT_UNKNOWN if none. */
static inline snd_pcm_format_t sndc_format_alsa(unsigned f)
{
    static const snd_pcm_format_t a[] = {
        [XENSND_PCM_FORMAT_S8] = SND_PCM_FORMAT_S8,
        [XENSND_PCM_FORMAT_U8] = SND_PCM_FORMAT_U8,
        [XENSND_PCM_FORMAT_S16_LE] = SND_PCM_FORMAT_S16_LE,
        [XENSND_PCM_FORMAT_S16_BE] = SND_PCM_FORMAT_S16_BE,
        [XENSND_PCM_FORMAT_U16_LE] = SND_PCM_FORMAT_U16_LE,
        [XENSND_PCM_FORMAT_U16_BE] = SND_PCM_FORMAT_U16_BE,
        [XENSND_PCM_FORMAT_S24_LE] = SND_PCM_FORMAT_S24_LE,
        [XENSND_PCM_FORMAT_S24_BE] = SND_PCM_FORMAT_S24_BE,
        [XENSND_PCM_FORMAT_U24_LE] = SND_PCM_FORMAT_U24_LE,
        [XENSND_PCM_FORMAT_U24_BE] = SND_PCM_FORMAT_U24_BE,
        [XENSND_PCM_FORMAT_S32_LE] = SND_PCM_FORMAT_S32_LE,
        [XENSND_PCM_FORMAT_S32_BE] = SND_PCM_FORMAT_S32_BE,
        [XENSND_PCM_FORMAT_U32_LE] = SND_PCM_FORMAT_U32_LE,
        [XENSND_PCM_FORMAT_U32_BE] = SND_PCM_FORMAT_U32_BE,
        [XENSND_PCM_FORMAT_F32_LE] = SND_PCM_FORMAT_FLOAT_LE,
        [XENSND_PCM_FORMAT_F32_BE] = SND_PCM_FORMAT_FLOAT_BE,
        [XENSND_PCM_FORMAT_F64_LE] = SND_PCM_FORMAT_FLOAT64_LE,
        [XENSND_PCM_FORMAT_F64_BE] = SND_PCM_FORMAT_FLOAT64_BE,
        [XENSND_PCM_FORMAT_IEC958_SUBFRAME_LE] = SND_PCM_FORMAT_IEC958_SUBFRAME_LE,
        [XENSND_PCM_FORMAT_IEC958_SUBFRAME_BE] = SND_PCM_FORMAT_IEC958_SUBFRAME_BE,
        [XENSND_PCM_FORMAT_MU_LAW] = SND_PCM_FORMAT_MU_LAW,
        [XENSND_PCM_FORMAT_A_LAW] = SND_PCM_FORMAT_A_LAW,
        [XENSND_PCM_FORMAT_IMA_ADPCM] = SND_PCM_FORMAT_IMA_ADPCM,
        [XENSND_PCM_FORMAT_MPEG] = SND_PCM_FORMAT_MPEG,
        [XENSND_PCM_FORMAT_GSM] = SND_PCM_FORMAT_GSM,
    };
    return f < sizeof(a) / sizeof(a[0]) ? a[f] : SND_PCM_FORMAT_UNKNOWN;
}

/* The sndif format for ALSA's f; -1 if sndif has none. */
static inline int sndc_format_from_alsa(snd_pcm_format_t f)
{
    for (unsigned i = 0; i <= XENSND_PCM_FORMAT_GSM; i++)
        if (sndc_format_alsa(i) == f)
            return (int)i;
    return -1;
}

#endif
