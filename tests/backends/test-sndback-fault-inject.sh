#!/usr/bin/env bash
# The core's fault layer serves sndback as the other classes: "corrupt 1"
# makes the next response's id wrong (sndback's corrupt hook), which the
# frontend sees; sndback logs it and keeps serving. "hang 500" during
# playback: no audio moves and no position is reported meanwhile (the PCM
# underruns, as under a hung card driver), then playback goes on where it
# was: every frame recorded once, in order, and the events still 0, 1, 2, ...
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
vsnd_setup
out=$TEST_TMP/front.out
sfront "$guest" "$DEV" connect open 0 48000 s16_le 2 8192 1024 sleep 3000 write 0 0 4096 \
    >"$out" 2>&1 &
fpid=$!
on_exit "kill -KILL $fpid 2>/dev/null"
wait_for 10 grep -q '^open: ok' "$out"
k=/local/domain/$drv/data/understudy/inject
xenstore-write "$k" "1 corrupt 1" && xenstore-chmod "$k" n0 "r$drv" || fail "writing $k"
wait $fpid && fail "a corrupted response went unnoticed: $(cat "$out")"
cat "$out"
grep -q 'response id .* to request id' "$out" || fail "not a wrong id: $(cat "$out")"
grep -q 'fault: corrupted response' "$SB_LOG" || fail "corruption not logged"

"$SNDGEN" -r 48000 -f S16_LE -c 2 -d 3 --raw -o "$TEST_TMP/a.raw" || fail "sndgen failed"
sfront "$guest" "$DEV" connect open 0 48000 s16_le 2 65536 4096 play 0 "$TEST_TMP/a.raw" \
    close 0 disconnect >"$out" 2>&1 &
fpid=$!
sleep 1.2
xenstore-write "$k" "2 hang 500" || fail "writing $k"
wait $fpid || fail "playback through a hang failed: $(cat "$out")"
cat "$out"
expect_eq "CUR_POS events" "$(sfront_field "$out" events n)" 140
grep -q 'hang over' "$SB_LOG" || fail "the hang did not end"
check "$REC"
expect_summary frames 144000 gaps 0 missing 0 repeats 0 result ok
expect_line '^stream-gap '
sndback_alive || fail "sndback exited"
exit 0
