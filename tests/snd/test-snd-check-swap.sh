#!/usr/bin/env bash
# Channels swapped over a stretch are reported exactly (first frame, frames, the
# order found) as a content error; the frame counter still runs through them.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" -d 2 -c 4 --swap 40000:256 -o "$TEST_TMP/a.wav" || fail "sndgen failed"
aplay -q -D clocked "$TEST_TMP/a.wav" || fail "aplay failed"
check "$REC"
expect_line '^channel-order at=40000 frames=256 .* channels=1,0,2,3$'
expect_summary channel_errors 256 runs 1 gaps 0 repeats 0 result content-error
expect_eq "exit status" "$CHECK_RC" 1
