#!/usr/bin/env bash
# A stretch played twice is reported exactly (where, how many frames) as a content error.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" -d 2 --repeat 20000:1000 -o "$TEST_TMP/a.wav" || fail "sndgen failed"
aplay -q -D clocked "$TEST_TMP/a.wav" || fail "aplay failed"
check "$REC"
expect_line '^repeat at=20000 frames=1000 '
expect_line '^run first=20000 last=95999 frames=76000 '
expect_summary repeats 1 repeated 1000 gaps 0 runs 2 result content-error
expect_eq "exit status" "$CHECK_RC" 1
