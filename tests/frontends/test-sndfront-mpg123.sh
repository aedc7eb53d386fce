#!/usr/bin/env bash
# mpg123 plays an 8 s mp3 through the shadow PCM while the sound driver domain
# is destroyed and replaced twice: mpg123 exits 0 in the mp3's own duration,
# and what the cards played is frame for frame mpg123's own decode but for two
# stretches, one per fault, that are missing (nothing differs, nothing is
# played twice or out of place).
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
requires mpg123 lame sox
snd_fe_setup --deadline-ms 1000
sox -n -r 44100 -c 2 -b 16 "$TEST_TMP/tone.wav" synth 8 sine 440 sine 660 vol 0.5 ||
    fail "sox synth failed"
lame --quiet "$TEST_TMP/tone.wav" "$TEST_TMP/tone.mp3" || fail "lame failed"
mpg123 -q -w "$TEST_TMP/ref.wav" "$TEST_TMP/tone.mp3" || fail "mpg123 -w failed"
ref_s=$(echo "scale=3; ($(stat -c %s "$TEST_TMP/ref.wav") - 44) / 176400" | bc)
mpg123 -q -o alsa -a understudy "$TEST_TMP/tone.mp3" 2>"$TEST_TMP/mpg123.err" &
mpid=$!
s=$(date +%s.%N)
snd_faults 2 $mpid 2.5 0
wait $mpid || fail "mpg123 failed: $(cat "$TEST_TMP/mpg123.err")"
wall=$(echo "$(date +%s.%N) - $s" | bc)
expect_ratio "mpg123's wall time vs the decode's duration" "$wall" "$ref_s" 0.9 1.2
sleep 1
check "$REC" --timing --ref "$TEST_TMP/ref.wav"
expect_summary ref_differ 0 ref_extra 0 result ok
expect_eq "stretches of the decode missing" "$(grep -c '^ref-missing' <<<"$CHECK_OUT")" 2
snd_sanitizer_check
exit 0
