#!/usr/bin/env bash
# Audio played at the wrong rate (ALSA's plug layer resampling 48 kHz into a 44.1 kHz
# clocked PCM) is a content error: the resampled frames no longer carry the counter.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
cat >>"$HOME/.asoundrc" <<EOF
pcm.slow { type plug slave { pcm "clocked" rate 44100 } }
EOF
"$SNDGEN" -r 48000 -d 1 -o "$TEST_TMP/a.wav" || fail "sndgen failed"
aplay -q -D slow "$TEST_TMP/a.wav" || fail "aplay failed"
check "$REC"
expect_eq "rate the clocked PCM ran at" "$(field "$(grep '^stream' <<<"$CHECK_OUT")" rate)" 44100
expect_summary result content-error
expect_eq "exit status" "$CHECK_RC" 1
