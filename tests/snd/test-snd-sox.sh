#!/usr/bin/env bash
# sox -t alsa plays through the clocked PCM in real time, every frame in order.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
requires sox
"$SNDGEN" -d 2 -o "$TEST_TMP/a.wav" || fail "sndgen failed"
timed wall sox -q "$TEST_TMP/a.wav" -t alsa clocked
expect_ratio "sox wall clock vs 2 s" "$wall" 2 0.8 1.5
check "$REC"
expect_line '^run first=0 last=95999 '
expect_summary contiguous yes underruns 0 result ok
