#!/usr/bin/env bash
# 2 s captured through sndback from the clocked PCM's capture side (TRIGGER
# START, READ as CUR_POS events say data is there): the frame counter arrives
# without a break, and the events are numbered 0, 1, 2, ... at the clock's rate.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
vsnd_setup
out=$TEST_TMP/front.out
# 44100 Hz, S32_LE, 2 channels: 8 octets a frame; 2 s = 705600 octets.
timed wall sfront_out "$out" "$guest" "$DEV" connect open 1 44100 s32_le 2 131072 8192 \
    capture 1 "$TEST_TMP/c.raw" 705600 close 1 disconnect
expect_ratio "wall clock vs 2 s" "$wall" 2 0.9 1.6
expect_eq "octets captured" "$(grep '^captured' "$out" | cut -d' ' -f2)" 705600
expect_ratio "position rate vs 44100" "$(sfront_field "$out" events rate)" 44100 0.9 1.1
check "$TEST_TMP/c.raw" --format S32_LE --rate 44100 --channels 2
expect_summary contiguous yes frames 88200 result ok
sndback_alive || fail "sndback exited"
exit 0
