#!/usr/bin/env bash
# mpg123 plays an mp3 (made here with sox and lame) through the clocked PCM in its
# own duration, and what was played is frame for frame mpg123's own decode.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
requires mpg123 lame sox
sox -n -r 44100 -c 2 -b 16 "$TEST_TMP/tone.wav" synth 3 sine 440 sine 660 vol 0.5 ||
    fail "sox synth failed"
lame --quiet "$TEST_TMP/tone.wav" "$TEST_TMP/tone.mp3" || fail "lame failed"
mpg123 -q -w "$TEST_TMP/ref.wav" "$TEST_TMP/tone.mp3" || fail "mpg123 -w failed"
timed wall mpg123 -q -o alsa -a clocked "$TEST_TMP/tone.mp3"
ref_s=$(echo "scale=3; ($(stat -c %s "$TEST_TMP/ref.wav") - 44) / 176400" | bc)
expect_ratio "mpg123 wall clock vs the decode's duration" "$wall" "$ref_s" 0.8 1.5
check "$REC" --timing --ref "$TEST_TMP/ref.wav"
expect_summary underruns 0 xruns 0 ref_differ 0 ref_extra 0 missing 0 result ok
expect_line '^reference ref_frames=([0-9]+) rec_frames=\1 matched=\1 '
