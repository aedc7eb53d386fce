#!/usr/bin/env bash
# A game's sounds: 24 short clips (0.25 s of frame-counter audio each, each
# numbered apart), each played by its own aplay through the shadow PCM at a
# steady 0.6 s rate, while the sound driver domain is destroyed and replaced
# twice. Every aplay exits 0 and none is late: each returns within 0.4 s of
# the clip's own length (a clip held up by a recovery would be a stall); the
# clips that fell in a recovery window are cut or silent, every other one was
# played whole, and nothing was played twice or corrupted.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
snd_fe_setup --deadline-ms 1000
N=24 CLIP=12000 # frames: 0.25 s at 48 kHz
for k in $(seq 0 $((N - 1))); do
    "$SNDGEN" -r 48000 -f S16_LE -c 2 -n $CLIP --start $((k * 100000)) -o "$TEST_TMP/clip$k.wav" ||
        fail "sndgen"
done
play() {
    local k=$1 s e rc=0
    s=$(date +%s.%N)
    aplay -q -D understudy "$TEST_TMP/clip$k.wav" 2>>"$TEST_TMP/aplay.err" || rc=$?
    e=$(date +%s.%N)
    echo "$k $rc $(echo "$e - $s" | bc)" >>"$TEST_TMP/clips.txt"
}
t0=$(date +%s.%N)
(
    for k in $(seq 0 $((N - 1))); do
        sleep "$(echo "$t0 + $k * 0.6 - $(date +%s.%N)" | bc | sed 's/^-.*/0/')"
        play "$k" &
    done
    wait
) &
sched=$!
snd_faults 2 - 4.3 0
wait $sched
sleep 1
expect_eq "clips played" "$(wc -l <"$TEST_TMP/clips.txt")" $N
while read -r k rc secs; do
    [ "$rc" -eq 0 ] || fail "clip $k: aplay exit $rc: $(cat "$TEST_TMP/aplay.err")"
    [ "$(echo "$secs <= 0.65" | bc)" = 1 ] || fail "clip $k: aplay took $secs s for 0.25 s of audio (a stall)"
done <"$TEST_TMP/clips.txt"
log "aplay durations: $(sort -n "$TEST_TMP/clips.txt" | awk '{printf "%s ", $3}')"
check "$REC"
expect_summary repeats 0 channel_errors 0 corrupt 0 format_errors 0
# Whole clips: runs of exactly CLIP frames that start a clip.
whole=$(grep '^run ' <<<"$CHECK_OUT" | while read -r line; do
    f=$(field "$line" first) n=$(field "$line" frames)
    [ $((f % 100000)) -eq 0 ] && [ "$n" -eq $CLIP ] && echo "$((f / 100000))"
done | sort -un | wc -l)
log "$whole of $N clips played whole"
# A recovery here takes well under a second: it can touch at most two clips.
[ "$whole" -ge $((N - 4)) ] || fail "only $whole of $N clips were played whole"
snd_sanitizer_check
exit 0
