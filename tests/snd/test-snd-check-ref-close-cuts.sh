#!/usr/bin/env bash
# Two cuts with one period of audio between them (a recovery that played a
# period and was cut again: faults closer together than the judge's 500 ms
# confirmation) are two missing stretches, not extra frames: where neither
# resynchronisation can be confirmed, a cut, if the audio after it agrees
# with the reference further on - not the nearer chance match of a pause and
# a word said again. A campaign run of the speech row (seed 800304851) was
# judged MALFUNCTION so.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
requires espeak-ng sox
text="Sentence one: amber river quietly seven lantern orbit. Sentence two: copper meadow
fragile thunder velvet harbor. Sentence three: crimson pillow distant marble echo saddle.
Sentence four: winter crystal hollow basket violet engine."
espeak-ng --stdout "$text" >"$TEST_TMP/ref.wav" || fail "espeak-ng failed"
# Kept: [0, 71092) - the first cut starts in a pause of the reference, whose
# zeros the recording has again 1 s on, before "Sentence three" - then one
# 2756-frame period from 104500, then from 118256 on.
sox "$TEST_TMP/ref.wav" "$TEST_TMP/cut.wav" trim 0s =71092s =104500s =107256s =118256s ||
    fail "sox failed"
check "$TEST_TMP/cut.wav" --timing --ref "$TEST_TMP/ref.wav"
expect_eq "missing stretches" "$(grep -c '^ref-missing' <<<"$CHECK_OUT")" 2
expect_line '^ref-missing rec_at=71092 ref_at=71092 frames=33408 '
expect_line '^ref-missing rec_at=73848 ref_at=107256 frames=11000 '
expect_summary ref_differ 0 ref_extra 0 result ok
