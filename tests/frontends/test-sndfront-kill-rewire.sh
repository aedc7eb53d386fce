#!/usr/bin/env bash
# The shadow PCM survives its sound driver domain being destroyed while aplay
# plays 30 s of frame-counter audio through it: a stand-in toolstack starts a
# new driver domain with a new sndback and rewires the card in place, five
# times at random points. aplay exits 0 having taken its normal time; what the card played
# (the clocked PCM's recording, across every sndback) is the audio with one
# gap per fault and nothing else: no repeat, no channel or format error; each
# recovery is published with its gap, and the gaps the frontend reports are
# the ones the recording shows.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
snd_fe_setup --deadline-ms 1000
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d 30 -o "$TEST_TMP/a.wav" || fail "sndgen"
aplay -q -D understudy "$TEST_TMP/a.wav" 2>"$TEST_TMP/aplay.err" &
apid=$!
s=$(date +%s.%N)
snd_faults 5 $apid 3.5 19
wait $apid || fail "aplay failed: $(cat "$TEST_TMP/aplay.err")"
wall=$(echo "$(date +%s.%N) - $s" | bc)
expect_ratio "aplay's wall time vs 30 s of audio" "$wall" 30 0.97 1.07
sleep 1 # the last sndback plays out its tail
check "$REC"
expect_summary repeats 0 channel_errors 0 corrupt 0 format_errors 0 gaps 5
mapfile -t gaps < <(snd_gaps)
for i in 0 1 2 3 4; do
    read -r missing ms wall_ms <<<"${gaps[$i]}"
    log "gap $((i + 1)): $missing frames, $ms ms of audio (wall $wall_ms ms); the frontend said ${SND_GAPS[$i]} ms"
    [ "${ms%.*}" -lt 1000 ] || fail "gap $((i + 1)) of $ms ms"
    # The frontend counts from the dead backend's last report, so its figure is
    # the recording's or up to one period (125 ms here) more.
    d=$(( SND_GAPS[i] - ${ms%.*} ))
    [ "$d" -ge -1 ] && [ "$d" -le 126 ] ||
        fail "gap $((i + 1)): the frontend said ${SND_GAPS[$i]} ms, the recording $ms ms"
done
expect_eq "recoveries" "$(sf_key "$guest" shadow/recoveries)" 5
"$XENSIM" info guest | grep -q state=running || fail "the frontend died"
snd_sanitizer_check
exit 0
