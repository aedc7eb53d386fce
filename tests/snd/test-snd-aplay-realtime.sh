#!/usr/bin/env bash
# aplay of 5 s of frame-counter audio into the clocked PCM takes about 5 s of wall
# clock, and the recording is one contiguous run of all its frames at 48 kHz.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d 5 -o "$TEST_TMP/a.wav" || fail "sndgen failed"
timed wall aplay -q -D clocked "$TEST_TMP/a.wav"
expect_ratio "aplay wall clock vs 5 s of audio" "$wall" 5 0.8 1.5
check "$REC"
expect_summary contiguous yes frames 240000 underruns 0 xruns 0 result ok
stream=$(grep '^stream' <<<"$CHECK_OUT")
expect_ratio "measured rate vs 48000" "$(field "$stream" rate_measured)" 48000 0.9 1.1
expect_ratio "stream clock vs 5 s" "$(field "$stream" clock_s)" 5 0.99 1.05
[ "$CHECK_RC" -eq 0 ] || fail "sndcheck exit $CHECK_RC on a clean recording"
