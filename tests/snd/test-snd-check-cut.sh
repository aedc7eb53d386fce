#!/usr/bin/env bash
# A stretch cut out of the audio is reported exactly: one gap, after which frame,
# how many frames; a gap alone is no content error, --max-gaps 0 makes it fail.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" -d 2 --cut 30000:480 -o "$TEST_TMP/a.wav" || fail "sndgen failed"
aplay -q -D clocked "$TEST_TMP/a.wav" || fail "aplay failed"
check "$REC"
expect_line '^gap after=29999 missing=480 stream_ms=10.000 '
expect_summary gaps 1 missing 480 runs 2 exact yes repeats 0 channel_errors 0 result ok
expect_eq "exit status with gaps allowed" "$CHECK_RC" 0
check "$REC" --max-gaps 0
expect_eq "exit status with --max-gaps 0" "$CHECK_RC" 3
check "$REC" --json
grep -q '^{"event":"gap","after":29999,"missing":480,' <<<"$CHECK_OUT" || fail "no JSON gap line"
