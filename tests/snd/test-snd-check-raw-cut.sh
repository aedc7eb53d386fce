#!/usr/bin/env bash
# sndcheck reads plain raw frames too: a cut made with dd in a raw file is reported
# exactly, and the frames are timed by their position.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" --raw -r 44100 -f S32_LE -c 3 -n 44100 -o "$TEST_TMP/a.raw" || fail "sndgen failed"
# frames 0..9999, then from 12345 on (12 bytes a frame): 2345 frames missing
{ dd if="$TEST_TMP/a.raw" bs=12 count=10000 status=none
  dd if="$TEST_TMP/a.raw" bs=12 skip=12345 status=none; } >"$TEST_TMP/cut.raw"
check "$TEST_TMP/cut.raw" --format S32_LE --rate 44100 --channels 3
expect_line '^gap after=9999 missing=2345 '
expect_summary gaps 1 missing 2345 frames 41755 result ok
"$SNDCHECK" "$TEST_TMP/cut.raw" >/dev/null 2>&1
expect_eq "exit status without the raw layout" "$?" 2
