#!/usr/bin/env bash
# A hostile sndif backend (sndhostile, seeded: SNDHOSTILE_SEED=N replays its
# choices) serves the ASan-built shadow sndfront for SNDHOSTILE_SECONDS (12)
# while aplay plays frame-counter audio through the card: correct answers and
# position events for a random while, then one act - a response with an
# unknown id, a wrong operation or an impossible status, a request answered
# twice, rsp_prod far ahead, an event out of order or of an unknown type, a
# position going back or past what was written, garbage in_prod, no answer
# past the deadline, Closing / Closed / InitWait unasked, junk versions (then
# InitWait), or, breaking no rule, random bytes over the shared buffer or an
# OPEN or WRITE refused with an sndif error - and it starts over from InitWait
# when the frontend closes, so one run sees many. Every rule-breaking act is
# detected: the frontend closes and publishes a shadow/report of the act's
# kind; nothing else makes it close (a timeout while all was well is logged,
# as a loaded machine's). Then the stand-in toolstack replaces the hostile
# domain by a real sndback: the card is live on it and stays live, and what
# reached it is continuous audio (no repeat, no channel or format error, one
# run to the end). Throughout, the frontend runs (no crash, no sanitizer
# report) and aplay never blocks: it exits 0 in its audio's time.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
[ -x "$TPROG/frontends/sndhostile" ] || skip "sndhostile not built (libasound2-dev missing?)"
SEED=${SNDHOSTILE_SEED:-$((RANDOM * 32768 + RANDOM))}
SECS=${SNDHOSTILE_SECONDS:-12}
log "sndhostile seed $SEED, $SECS s (SNDHOSTILE_SEED=$SEED replays its choices)"
DUR=$((SECS + 8)) # the audio: the hostile phase, then the real sndback
RATE=48000
hostile_drv() { sndhostile_dom "$1" "$SEED" "$SECS"; }
on_exit '[ "$rc" -eq 0 ] || { echo "---- drv0.out (sndhostile, last 40 lines)" >&2; tail -n 40 "$TEST_TMP/drv0.out" >&2; }'
SND_FE_DRV=hostile_drv snd_fe_setup --deadline-ms 1000
"$SNDGEN" -r $RATE -f S16_LE -c 2 -d $DUR -o "$TEST_TMP/a.wav" || fail "sndgen"
aplay -q -D understudy "$TEST_TMP/a.wav" 2>"$TEST_TMP/aplay.err" &
apid=$!
s=$(date +%s.%N)

# The hostile phase: the frontend runs throughout.
sndhostile_wait drv0 "$SECS"
out=$TEST_TMP/drv0.out
summary=$(grep '^HOSTILE-SUMMARY' "$out")
log "$summary"
grep -o 'HOSTILE-[A-Z-]* [a-z-]*' "$out" | grep -v 'CONNECT\|SUMMARY' | sort | uniq -c | sed 's/^/# /'
acts=$(grep -c '\] HOSTILE [a-z-]*:' "$out")
detected=$(grep -c 'HOSTILE-DETECTED' "$out")
need=$((SECS / 4 > 1 ? SECS / 4 : 1))
[ "$acts" -ge $need ] || fail "only $acts hostile acts in $SECS s"
[ "$detected" -ge 1 ] || fail "no act detected"
# A frontend that misses an act, closes without a report, takes an act for
# another or closes on a backend doing nothing wrong fails; a timeout where
# another kind was due, or while all was well, is a loaded machine's (logged).
bad=$( (grep -E 'HOSTILE-(MISSED|NO-REPORT)' "$out"
    grep -E 'HOSTILE-(WRONG-KIND|UNPROVOKED)' "$out" | grep -v "'[0-9]* timeout ") | sort)
[ -z "$bad" ] || { grep -B1 -E 'HOSTILE-(MISSED|NO-REPORT|WRONG-KIND|UNPROVOKED)' "$out" | sed 's/^/  | /'
    fail "the frontend missed an act, took it for another or closed on a backend doing nothing wrong"; }
grep -E 'HOSTILE-(WRONG-KIND|UNPROVOKED)' "$out" | sed 's/^/# tolerated: /'
snd_guest_alive
kill -0 $apid 2>/dev/null || fail "aplay ended during the hostile phase: $(cat "$TEST_TMP/aplay.err")"
seq=$(sf_key "$guest" shadow/report | cut -d' ' -f1)
rec=$(sf_key "$guest" shadow/recoveries)
log "the frontend: ${seq:-0} reports (last '$(sf_key "$guest" shadow/report)'), $rec recoveries"
[ "${seq:-0}" -ge "$detected" ] || fail "$detected acts detected, ${seq:-0} reports published"
[ "${rec:-0}" -ge 1 ] || fail "no recovery completed on the hostile backend"

# The toolstack replaces the hostile domain: the card is live on a real sndback.
replace_sndback drv0 drv1 "$guest" >/dev/null
wait_for 15 sf_live_n "$guest" $((rec + 1))
t_live=$(echo "$(date +%s.%N) - $s" | bc)
log "live on drv1 at ${t_live} s of ${DUR} s: $(sf_key "$guest" shadow/last-recovery) gap=$(sf_key "$guest" shadow/last-gap) ms"
wait $apid || fail "aplay failed: $(cat "$TEST_TMP/aplay.err")"
wall=$(echo "$(date +%s.%N) - $s" | bc)
expect_ratio "aplay's wall time vs $DUR s of audio" "$wall" $DUR 0.9 1.3
sleep 1 # sndback plays out its tail
snd_guest_alive
expect_eq "state after the switch" "$(sf_key "$guest" shadow/state)" live
expect_eq "recoveries after the switch" "$(sf_key "$guest" shadow/recoveries)" $((rec + 1))

# What reached the real sndback: one clean run from the switch to the end.
check "$REC"
expect_summary repeats 0 channel_errors 0 corrupt 0 format_errors 0
run=$(grep '^run ' <<<"$CHECK_OUT" | tail -1)
[ -n "$run" ] || fail "nothing reached sndback"
frames=$(field "$run" frames)
last=$(field "$run" last)
want=$(echo "($DUR - $t_live - 1.5) * $RATE / 1" | bc)
log "the last run: $frames frames to frame $last (want >= $want, to the end: $((DUR * RATE - 1)))"
[ "$(echo "$t_live < $DUR - 3" | bc)" = 1 ] || fail "the switch came too late to judge the audio after it"
[ "$frames" -ge "$want" ] ||
    fail "the audio after the switch is not continuous: the last run has $frames frames"
[ "$last" -ge $(((DUR * RATE) - RATE / 4)) ] || fail "the audio stops at frame $last"
snd_sanitizer_check
if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$out"; then
    log "note: sndhostile itself has a sanitizer report (not the frontend's):"
    grep -m3 -E 'Sanitizer|runtime error' "$out" | sed 's/^/# /'
fi
exit 0
