#!/usr/bin/env bash
# A program pauses its stream (snd_pcm_pause) and the sound driver domain dies
# while it is paused: the pause goes on as long as the program wants it, and
# at resume the stream plays on from the pause on the new backend. sndplay
# exits 0 having taken the audio's length plus the pause; the recording has
# one gap (what the dead backend had queued and not played when it paused: at
# most its buffer) and no repeat.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
SNDPLAY=$TPROG/snd/sndplay
[ -x "$SNDPLAY" ] || skip "sndplay not built"
snd_fe_setup --deadline-ms 1000
export ASAN_OPTIONS=${ASAN_OPTIONS}:detect_leaks=0 # alsa-lib's own caches
"$SNDPLAY" -D understudy -r 48000 -d 5 --pause-at 2 --pause-for 2.5 >"$TEST_TMP/sndplay.out" 2>&1 &
ppid=$!
s=$(date +%s.%N)
sleep 2.9 # paused (the program wrote 2 s and paused a buffer later at most)
replace_sndback drv0 drv1 "$guest" >/dev/null
wait_for 10 sf_live_n "$guest" 1
log "fault while paused: $(sf_key "$guest" shadow/last-recovery) gap=$(sf_key "$guest" shadow/last-gap) ms"
wait $ppid || fail "sndplay failed: $(cat "$TEST_TMP/sndplay.out")"
wall=$(echo "$(date +%s.%N) - $s" | bc)
expect_ratio "sndplay's wall time vs 5 s of audio and a 2.5 s pause" "$wall" 7.5 0.95 1.15
sleep 1
check "$REC"
expect_summary repeats 0 channel_errors 0 corrupt 0 format_errors 0
gaps=$(field "$SUMMARY" gaps)
[ "$gaps" -le 1 ] || fail "$gaps gaps for one fault"
if [ "$gaps" -eq 1 ]; then
    read -r missing ms wall_ms <<<"$(snd_gaps)"
    log "gap: $missing frames, $ms ms of audio"
    [ "${ms%.*}" -le 600 ] || fail "a gap of $ms ms for a fault while paused (the buffer is 0.5 s)"
fi
expect_eq "frames played and missing" "$(( $(field "$SUMMARY" frames) + $(field "$SUMMARY" missing) ))" 240000
snd_sanitizer_check
exit 0
