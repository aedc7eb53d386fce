#!/usr/bin/env bash
# A program that underruns and prepares its stream again while the sound
# driver domain is being replaced (a guest starved of CPU across a fault):
# the recovery's audio gap (shadow/last-gap) is still measured - from the
# failed backend's last report to the reconnect, in time, the stream's
# positions having started afresh - not published as 0, as it was when the
# prepare cleared the record of the fault (seen on real Xen under load). The
# figure must agree with the gap the card's recording shows.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
snd_fe_setup --deadline-ms 1000
export ASAN_OPTIONS=${ASAN_OPTIONS}:detect_leaks=0 # alsa-lib's own caches
"$SNDGEN" --raw -d 6 -o "$TEST_TMP/a.raw" || fail "sndgen failed"
aplay -D understudy -t raw -f S16_LE -c 2 -r 48000 --period-size=1024 --buffer-size=4096 \
    "$TEST_TMP/a.raw" 2>"$TEST_TMP/aplay.err" &
a=$!
sleep 1.5
kill -STOP $a || fail "aplay ended early: $(cat "$TEST_TMP/aplay.err")"
"$XENSIM" destroy drv0 >/dev/null || fail "xensim destroy drv0"
fe_not_live() { [ "$(sf_key "$guest" shadow/state)" != live ]; }
wait_for 10 fe_not_live
sleep 0.3 # past aplay's buffer (85 ms): it finds an xrun when it runs again
kill -CONT $a
sleep 0.7 # aplay prepares, starts again and plays on into no backend
replace_sndback drv0 drv1 "$guest" >/dev/null
wait_for 10 sf_live_n "$guest" 1
gap=$(sf_key "$guest" shadow/last-gap)
log "recovery: $(sf_key "$guest" shadow/last-recovery); gap=$gap ms"
wait $a || fail "aplay failed: $(cat "$TEST_TMP/aplay.err")"
grep -q 'underrun!!!' "$TEST_TMP/aplay.err" || fail "aplay saw no underrun: the test did not make its case"
sleep 1
check "$REC"
expect_summary repeats 0 channel_errors 0 corrupt 0 format_errors 0
# The card's longest silence between two runs of frames, in wall time.
card=$(grep '^gap ' <<<"$CHECK_OUT" | while read -r l; do field "$l" wall_ms; done | sort -g | tail -n 1)
log "the card's longest gap: $card ms (wall)"
[ -n "$card" ] || fail "the recording shows no gap"
[ "${gap:-0}" -gt 0 ] 2>/dev/null || fail "shadow/last-gap is '$gap' for a recovery the card heard $card ms of silence in"
expect_ratio "the frontend's gap vs the card's" "$gap" "$card" 0.7 1.3
snd_sanitizer_check
exit 0
