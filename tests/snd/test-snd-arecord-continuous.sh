#!/usr/bin/env bash
# arecord from the clocked PCM's capture side for 3 s takes about 3 s and gets the
# frame counter without a break (4 channels, S32_LE, 44.1 kHz).
. "$(dirname "$0")/snd-functions.sh"
snd_setup
timed wall arecord -q -D clocked -d 3 -f S32_LE -c 4 -r 44100 -t raw "$TEST_TMP/c.raw"
expect_ratio "arecord wall clock vs 3 s" "$wall" 3 0.8 1.5
check "$TEST_TMP/c.raw" --format S32_LE --rate 44100 --channels 4
expect_summary contiguous yes frames 132300 result ok
expect_line '^run first=0 last=132299 '
# What the plugin produced, with its timestamps: one stream, no xrun.
check "$REC"
expect_summary streams 1 xruns 0 contiguous yes result ok
stream=$(grep '^stream' <<<"$CHECK_OUT")
expect_eq "recorded direction" "$(field "$stream" dir)" capture
expect_ratio "measured rate vs 44100" "$(field "$stream" rate_measured)" 44100 0.9 1.1
