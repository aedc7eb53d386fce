#!/usr/bin/env bash
# S32_LE frames played as S16_LE are reported as a format error naming the layout
# they look like (two S16 channels of a frame are one S32 sample: S32_LE, 2 channels).
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" --raw -f S32_LE -c 2 -d 1 -o "$TEST_TMP/a.raw" || fail "sndgen failed"
aplay -q -D clocked -t raw -f S16_LE -c 2 -r 48000 "$TEST_TMP/a.raw" || fail "aplay failed"
check "$REC"
expect_line '^format-error stream=0 declared=S16_LE channels=2 looks_like=S32_LE looks_like_channels=2$'
expect_summary format_errors 1 result content-error
expect_eq "exit status" "$CHECK_RC" 1
