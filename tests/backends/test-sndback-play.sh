#!/usr/bin/env bash
# 3 s of frame-counter audio WRITten through sndback (OPEN, WRITE as room
# appears, TRIGGER START, STOP) plays into the clocked PCM in about 3 s: the
# recording is one contiguous run of every frame at 48 kHz, and the CUR_POS
# events arrive numbered 0, 1, 2, ..., one per period, advancing at the
# clock's rate.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
vsnd_setup
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d 3 --raw -o "$TEST_TMP/a.raw" || fail "sndgen failed"
out=$TEST_TMP/front.out
timed wall sfront_out "$out" "$guest" "$DEV" connect open 0 48000 s16_le 2 65536 4096 \
    play 0 "$TEST_TMP/a.raw" close 0 disconnect
expect_ratio "wall clock vs 3 s of audio" "$wall" 3 0.9 1.6
expect_eq "octets played" "$(grep '^played' "$out" | cut -d' ' -f2)" 576000
# 576000 octets / 4096 per period: 140 period boundaries, every one an event.
expect_eq "CUR_POS events" "$(sfront_field "$out" events n)" 140
expect_eq "last event id" "$(sfront_field "$out" events last_id)" 139
expect_ratio "position rate vs 48000" "$(sfront_field "$out" events rate)" 48000 0.95 1.05
check "$REC"
expect_summary contiguous yes frames 144000 result ok
stream=$(grep '^stream' <<<"$CHECK_OUT")
expect_ratio "measured rate vs 48000" "$(field "$stream" rate_measured)" 48000 0.95 1.05
sndback_alive || fail "sndback exited"
exit 0
