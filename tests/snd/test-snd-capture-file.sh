#!/usr/bin/env bash
# With capture file, the clocked PCM's capture side plays back a raw file at the
# stream's rate, then silence: arecord gets the file's frames exactly.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" --raw -f S16_LE -c 2 -n 24000 --start 5000 -o "$TEST_TMP/src.raw" || fail "sndgen failed"
snd_asoundrc "capture file capture_file \"$TEST_TMP/src.raw\""
timed wall arecord -q -D clocked -d 1 -f S16_LE -c 2 -r 48000 -t raw "$TEST_TMP/c.raw"
expect_ratio "arecord wall clock vs 1 s" "$wall" 1 0.8 1.5
check "$TEST_TMP/c.raw" --format S16_LE --rate 48000 --channels 2
expect_line '^run first=5000 last=28999 frames=24000 '
expect_line '^silence at=29000 frames=24000 '
expect_summary runs 1 gaps 0 silence 24000 result ok
