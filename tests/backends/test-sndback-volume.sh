#!/usr/bin/env bash
# Software volume and mute: SET_VOLUME 0 dB on both channels leaves the frame
# counter bit-exact in the recording; GET_VOLUME reads back what was set; a
# muted stream records silence, and nothing of the counter.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
vsnd_setup
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d 1 --raw -o "$TEST_TMP/a.raw" || fail "sndgen failed"
out=$TEST_TMP/front.out
# The same second of audio twice: at 0 dB, then muted.
sfront_out "$out" "$guest" "$DEV" connect open 0 48000 s16_le 2 65536 4096 \
    setvol 0 -6000 -12500 getvol 0 setvol 0 0 0 getvol 0 play 0 "$TEST_TMP/a.raw" close 0 \
    open 0 48000 s16_le 2 65536 4096 mute 0 1 1 play 0 "$TEST_TMP/a.raw" unmute 0 1 1 \
    close 0 disconnect || fail "frontend failed"
mapfile -t v < <(grep '^volume' "$out")
expect_eq "volume read back" "${v[0]}" "volume -6000 -12500"
expect_eq "0 dB read back" "${v[1]}" "volume 0 0"
# The counter once, bit-exact (a second, unmuted copy would be a repeat), then silence.
check "$REC"
expect_summary contiguous yes frames 96000 runs 1 repeats 0 corrupt 0 silence 48000 result ok
expect_line '^run first=0 last=47999 frames=48000 stream=0 '
expect_line '^silence at=48000 frames=48000 '
sndback_alive || fail "sndback exited"
exit 0
