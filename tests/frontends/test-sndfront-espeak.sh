#!/usr/bin/env bash
# espeak-ng --stdout | aplay speaks about 9 s through the shadow PCM while the
# sound driver domain is destroyed and replaced twice: aplay exits 0 in the
# speech's own duration, and what the cards played is frame for frame what
# espeak-ng wrote but for two stretches, one per fault, that are missing.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
requires espeak-ng
# espeak-ng speaks at 22050 Hz, mono: a card that has it (the shadow PCM is
# exact; plug:understudy would convert, and the comparison would not hold).
VSND_CARD=("${VSND_CARD[@]/#sample-rates=*/sample-rates=22050,44100,48000}")
snd_fe_setup --deadline-ms 1000
text="The understudy keeps playing while the driver domain restarts. A sound card that
survives its driver is a sound card whose programs never notice. Count with me: one, two,
three, four, five, six, seven, eight, nine, ten, eleven, twelve."
espeak-ng --stdout "$text" >"$TEST_TMP/ref.wav" || fail "espeak-ng failed"
check "$TEST_TMP/ref.wav" # its layout, for the duration
rate=$(field "$(grep '^stream' <<<"$CHECK_OUT")" rate)
ref_s=$(echo "scale=3; $(field "$SUMMARY" frames) / $rate" | bc)
log "the speech: $ref_s s at $rate Hz"
: >"$REC"
bash -c 'espeak-ng --stdout "$1" | aplay -q -D understudy' _ "$text" 2>"$TEST_TMP/aplay.err" &
apid=$!
s=$(date +%s.%N)
snd_faults 2 $apid 2.5 0
wait $apid || fail "aplay failed: $(cat "$TEST_TMP/aplay.err")"
wall=$(echo "$(date +%s.%N) - $s" | bc)
expect_ratio "aplay's wall time vs the speech's duration" "$wall" "$ref_s" 0.9 1.2
sleep 1
check "$REC" --timing --ref "$TEST_TMP/ref.wav"
expect_summary ref_differ 0 ref_extra 0 result ok
expect_eq "stretches of the speech missing" "$(grep -c '^ref-missing' <<<"$CHECK_OUT")" 2
snd_sanitizer_check
exit 0
