#!/usr/bin/env bash
# arecord records 12 s through the shadow PCM while the sound driver domain is
# destroyed and replaced three times. The backend's source is the clocked
# PCM's frame counter numbered by time (capture clock), so what a restarted
# sndback captures goes on where time says: arecord exits 0 in its normal
# time with all 12 s, and its file is the counter with one gap per fault
# (silence where the card had no backend), no repeat, no channel or format
# error.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
snd_fe_setup --deadline-ms 1000
arecord -q -D understudy -f S16_LE -c 2 -r 48000 -d 12 "$TEST_TMP/c.wav" 2>"$TEST_TMP/arecord.err" &
apid=$!
s=$(date +%s.%N)
snd_faults 3 $apid 1.5 9
wait $apid || fail "arecord failed: $(cat "$TEST_TMP/arecord.err")"
wall=$(echo "$(date +%s.%N) - $s" | bc)
expect_ratio "arecord's wall time vs 12 s" "$wall" 12 0.95 1.2
check "$TEST_TMP/c.wav"
expect_summary repeats 0 channel_errors 0 corrupt 0 format_errors 0 frames 576000 gaps 3
mapfile -t gaps < <(snd_gaps)
for i in 0 1 2; do
    read -r missing ms wall_ms <<<"${gaps[$i]}"
    log "gap $((i + 1)): $missing frames, $ms ms (wall $wall_ms ms); the frontend said ${SND_GAPS[$i]} ms"
    # Reported from the backend's last position event: within a period (125 ms).
    d=$(( SND_GAPS[i] - ${ms%.*} ))
    [ "${d#-}" -le 130 ] || fail "gap $((i + 1)): the frontend said ${SND_GAPS[$i]} ms, the file $ms ms"
done
snd_sanitizer_check
exit 0
