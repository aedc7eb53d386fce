#!/usr/bin/env bash
# Cuts and repeats of a multiple of the low counter's 512 frames (a whole period,
# as a dropped period would be) are found from the side bits: their length is
# exact, their place within 32 frames.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" --raw -f S16_LE -c 2 -n 100000 --cut 5000:1024 --repeat 60013:512 \
    -o "$TEST_TMP/a.raw" || fail "sndgen failed"
check "$TEST_TMP/a.raw" --format S16_LE --rate 48000 --channels 2
expect_line '^gap after=50(0[0-9]|[12][0-9]|3[01]) missing=1024 .* where=within-32-frames$'
expect_line '^repeat at=600[0-4][0-9] frames=512 .* where=within-32-frames$'
expect_line '^run first=60[0-9]+ last=99999 '
expect_summary gaps 1 missing 1024 repeats 1 repeated 512 corrupt 0 exact yes result content-error
