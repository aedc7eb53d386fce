#!/usr/bin/env bash
# espeak-ng --stdout | aplay plays speech through the clocked PCM in its own duration,
# and what was played is frame for frame what espeak-ng writes.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
requires espeak-ng
text="The understudy keeps playing while the driver domain restarts."
espeak-ng --stdout "$text" >"$TEST_TMP/ref.wav" || fail "espeak-ng failed"
timed wall bash -c 'espeak-ng --stdout "$1" | aplay -q -D clocked' _ "$text"
check "$TEST_TMP/ref.wav"  # its layout, for the duration
rate=$(field "$(grep '^stream' <<<"$CHECK_OUT")" rate)
ref_s=$(echo "scale=3; $(field "$SUMMARY" frames) / $rate" | bc)
expect_ratio "aplay wall clock vs the speech's duration" "$wall" "$ref_s" 0.8 1.5
check "$REC" --timing --ref "$TEST_TMP/ref.wav"
expect_summary underruns 0 xruns 0 ref_differ 0 ref_extra 0 missing 0 result ok
expect_line '^reference ref_frames=([0-9]+) rec_frames=\1 matched=\1 '
