#!/usr/bin/env bash
# A writer stopped (SIGSTOP) for longer than the buffer while it waits in
# poll for room: the clocked PCM runs out while nothing asks for its pointer,
# and the poller must hear it as an xrun (-EPIPE: aplay prepares again and
# plays on), not as -EIO (aplay: "write error: Input/output error", exit 1),
# which it was while the stream's state still said running. Three stops; no
# frame may be lost or repeated, only the xruns' silence between.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" --raw -d 4 -o "$TEST_TMP/a.raw" || fail "sndgen failed"
# From a file: aplay is never short of data, so it spends its time in poll.
aplay -D clocked -t raw -f S16_LE -c 2 -r 48000 --period-size=1024 --buffer-size=4096 \
    "$TEST_TMP/a.raw" 2>"$TEST_TMP/aplay.err" &
a=$!
sleep 0.8
for k in 1 2 3; do
    kill -STOP $a 2>/dev/null || fail "aplay ended before stop $k: $(cat "$TEST_TMP/aplay.err")"
    sleep 0.3 # 3.5 buffers
    kill -CONT $a
    sleep 0.5
done
wait $a || fail "aplay failed after a stop in poll: $(cat "$TEST_TMP/aplay.err")"
n=$(grep -c 'underrun!!!' "$TEST_TMP/aplay.err")
log "aplay saw $n underruns"
[ "$n" -ge 1 ] || fail "no underrun for three stops of 3.5 buffers: $(cat "$TEST_TMP/aplay.err")"
check "$REC"
expect_summary missing 0 repeats 0 channel_errors 0 corrupt 0
[ "$(field "$SUMMARY" xruns)" -ge 1 ] || fail "the recording has no xrun"
