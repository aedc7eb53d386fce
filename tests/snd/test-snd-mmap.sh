#!/usr/bin/env bash
# mmap access (aplay -M, arecord -M) plays and captures in real time and in order.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" -d 1.5 -c 2 -o "$TEST_TMP/a.wav" || fail "sndgen failed"
timed wall aplay -q -M -D clocked "$TEST_TMP/a.wav"
expect_ratio "aplay -M wall clock vs 1.5 s" "$wall" 1.5 0.8 1.5
check "$REC"
expect_line '^run first=0 last=71999 '
expect_summary contiguous yes underruns 0 result ok
timed wall arecord -q -M -D clocked -d 1 -f S32_LE -c 2 -r 48000 -t raw "$TEST_TMP/c.raw"
expect_ratio "arecord -M wall clock vs 1 s" "$wall" 1 0.8 1.5
check "$TEST_TMP/c.raw" --format S32_LE --rate 48000 --channels 2
expect_summary contiguous yes frames 48000 result ok
