#!/usr/bin/env bash
# The core's fault layer serves sndback as the other classes: "corrupt 1"
# makes the next response's id wrong (sndback's corrupt hook), which the
# frontend sees; sndback logs it and keeps serving.
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
sndback_alive || fail "sndback exited"
exit 0
