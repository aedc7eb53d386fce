#!/usr/bin/env bash
# Streams opened one after another append to one recording (as a sink reopened after
# its driver domain restarts would); sndcheck reads them as one sequence: the hole
# between them in wall-clock ms, and the frames missing between their contents.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" -n 48000 -o "$TEST_TMP/a.wav" || fail "sndgen failed"
"$SNDGEN" -n 48000 --start 60000 -o "$TEST_TMP/b.wav" || fail "sndgen failed"
aplay -q -D clocked "$TEST_TMP/a.wav" || fail "aplay a failed"
sleep 0.3
aplay -q -D clocked "$TEST_TMP/b.wav" || fail "aplay b failed"
check "$REC"
expect_summary streams 2 gaps 1 missing 12000 result ok
expect_line '^gap after=47999 missing=12000 stream_ms=250.000 wall_ms=[0-9]+.* stream=1 '
hole=$(field "$(grep '^stream-gap' <<<"$CHECK_OUT")" wall_ms)
[ "$(echo "$hole >= 250" | bc)" = 1 ] || fail "hole between the streams $hole ms, want >= 250"
check "$REC" --max-gap-ms 100
expect_eq "exit status with --max-gap-ms 100" "$CHECK_RC" 3
snd_asoundrc "file \"$REC\" truncate yes"
aplay -q -D clocked "$TEST_TMP/a.wav" || fail "aplay failed"
check "$REC"
expect_summary streams 1 runs 1 result ok
