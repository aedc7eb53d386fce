#!/usr/bin/env bash
# The shadow PCM when its program is stopped (SIGSTOP) for longer than the
# buffer while it waits in poll for room - as a guest's vcpu can go unscheduled
# for seconds on a loaded host: the poller must hear an xrun (-EPIPE: aplay
# prepares again and plays on), not -EIO (aplay: "write error: Input/output
# error", exit 1), which it was while the stream's state still said running
# (seen on real Xen under software emulation, tests/system). Three stops;
# nothing played twice. (What was still on its way to the backend when the
# program's clock ran out may be dropped when the program prepares again - a
# period was, in one run of ten here - so the frames missing are logged, not
# judged.)
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
snd_fe_setup
"$SNDGEN" --raw -d 4 -o "$TEST_TMP/a.raw" || fail "sndgen failed"
# From a file: aplay is never short of data, so it spends its time in poll.
aplay -D understudy -t raw -f S16_LE -c 2 -r 48000 --period-size=1024 --buffer-size=4096 \
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
sleep 1
check "$REC"
expect_summary repeats 0 channel_errors 0 corrupt 0 format_errors 0
log "frames missing: $(field "$SUMMARY" missing)"
snd_sanitizer_check
exit 0
