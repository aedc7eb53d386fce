#!/usr/bin/env bash
# snd_pcm_pause stops the clocked PCM's clock and resuming restarts it: the
# content stays one contiguous run, the stream clock leaves the pause out and
# the wall clock has it.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
SNDPLAY=$TPROG/snd/sndplay
[ -x "$SNDPLAY" ] || skip "sndplay not built"
export ASAN_OPTIONS=${ASAN_OPTIONS}:detect_leaks=0 # alsa-lib's own caches
timed wall "$SNDPLAY" -D clocked -d 2 --pause-at 1 --pause-for 0.6
expect_ratio "wall clock vs 2 s of audio and a 0.6 s pause" "$wall" 2.6 0.8 1.5
check "$REC"
expect_line '^run first=0 last=95999 '
expect_summary contiguous yes result ok
stream=$(grep '^stream' <<<"$CHECK_OUT")
expect_eq "pauses" "$(field "$stream" pauses)" 1
expect_ratio "stream clock vs 2 s" "$(field "$stream" clock_s)" 2 0.99 1.1
paused=$(echo "$(field "$stream" wall_s) - $(field "$stream" clock_s)" | bc)
log "wall minus stream clock: $paused s"
[ "$(echo "$paused >= 0.5 && $paused <= 1.0" | bc)" = 1 ] || fail "the pause is not in the wall clock ($paused s)"
