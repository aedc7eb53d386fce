#!/usr/bin/env bash
# A client writing non-interleaved buffers in nonblocking mode, waiting with
# poll() on the PCM's descriptors, plays in real time and in order.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
SNDPLAY=$TPROG/snd/sndplay
[ -x "$SNDPLAY" ] || skip "sndplay not built"
export ASAN_OPTIONS=${ASAN_OPTIONS}:detect_leaks=0 # alsa-lib's own caches
timed wall "$SNDPLAY" -D clocked -c 3 -f S32_LE -r 44100 -d 1.5 --noninterleaved --nonblock
expect_ratio "wall clock vs 1.5 s" "$wall" 1.5 0.8 1.5
check "$REC"
expect_line '^run first=0 last=66149 '
expect_summary contiguous yes underruns 0 xruns 0 result ok
