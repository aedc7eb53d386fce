#!/usr/bin/env bash
# Speech repeats waveforms exactly (espeak-ng synthesises a vowel the same way
# each time): a stretch cut out of it is still reported as one missing
# stretch of the right length, not as several cuts and extra frames from a
# resynchronisation on an earlier copy of a vowel. The cut is the one a
# loaded run of test-sndfront-espeak made (735 ms, 2.6 s in).
. "$(dirname "$0")/snd-functions.sh"
snd_setup
requires espeak-ng sox
text="The understudy keeps playing while the driver domain restarts. A sound card that
survives its driver is a sound card whose programs never notice. Count with me: one, two,
three, four, five, six, seven, eight, nine, ten, eleven, twelve."
espeak-ng --stdout "$text" >"$TEST_TMP/ref.wav" || fail "espeak-ng failed"
sox "$TEST_TMP/ref.wav" "$TEST_TMP/cut.wav" trim 0s =57876s =74089s =137477s =152025s ||
    fail "sox failed"
check "$TEST_TMP/cut.wav" --timing --ref "$TEST_TMP/ref.wav"
expect_eq "missing stretches" "$(grep -c '^ref-missing' <<<"$CHECK_OUT")" 2
expect_line '^ref-missing rec_at=57876 ref_at=57876 frames=16213 '
expect_line '^ref-missing rec_at=121264 ref_at=137477 frames=14548 '
expect_summary ref_differ 0 ref_extra 0 result ok
