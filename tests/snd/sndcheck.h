/* sndcheck.h - what sndcheck's analyses share: the options and the tally. */
#ifndef SND_SNDCHECK_H
#define SND_SNDCHECK_H

#include <stdint.h>

#include "sndin.h"

struct check_opts {
    double silence_ms; /* timing mode: report silences at least this long */
    const char *ref;   /* timing mode: a reference decode to compare with */
    struct sndin_raw raw;
};

struct check_tally {
    uint64_t frames, runs, gaps, missing, repeats, repeated, chan_errors, corrupt, silence;
    uint64_t underruns, underrun_frames, xruns, format_errors, inner_silence;
    uint64_t ref_matched, ref_mismatched, ref_extra;
    double max_gap_ms, max_underrun_ms;
    int inexact; /* some run too short to name its frame numbers */
};

/* The time frame i of chunk c of stream s played, in ns. */
uint64_t frame_time(const struct sndin *in, const struct sndin_stream *s,
                    const struct sndin_chunk *c, uint64_t i);
int frame_is_zero(const unsigned char *p, unsigned bytes);

/* The frame-counter analysis (sndcount.c). */
int count_check(const struct sndin *in, struct check_tally *t);
/* Content that carries no counter (sndref.c): silences, and the comparison
 * with a reference decode when opts->ref is set; -1 if the reference cannot be read. */
int timing_check(const struct sndin *in, const struct check_opts *o, struct check_tally *t);

#endif
