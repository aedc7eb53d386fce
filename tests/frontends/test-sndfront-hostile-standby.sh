#!/usr/bin/env bash
# A hostile hot standby (sndhostile, seeded: SNDHOSTILE_SEED=N replays its
# choices) held by the ASan-built shadow sndfront while aplay plays through
# a real sndback. The frontend OPENs aplay's stream on the standby ahead
# (sn_standby.c), and the standby misbehaves in every way it can while held:
# that OPEN answered with an unknown id, a wrong operation or status, twice
# or refused; rsp_prod far ahead, garbage on its event page, state changes
# unasked, junk versions, scribbles - starting over each time the frontend
# drops it and sets the standby up afresh. The live card is never touched:
# no recovery, no report, aplay exits 0 in its audio's time, the recording
# is one run with no gap or repeat; the frontend never crashes (no sanitizer
# report); and a standby that broke a rule was dropped.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
[ -x "$TPROG/frontends/sndhostile" ] || skip "sndhostile not built (libasound2-dev missing?)"
SEED=${SNDHOSTILE_SEED:-$((RANDOM * 32768 + RANDOM))}
SECS=${SNDHOSTILE_SECONDS:-12}
log "sndhostile seed $SEED, $SECS s (SNDHOSTILE_SEED=$SEED replays its choices)"
DUR=$((SECS + 4))
snd_fe_setup --deadline-ms 1000
fe=$(vsnd_fe "$guest" "$DEV")
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d $DUR -o "$TEST_TMP/a.wav" || fail "sndgen"
aplay -q -D understudy "$TEST_TMP/a.wav" 2>"$TEST_TMP/aplay.err" &
apid=$!
s=$(date +%s.%N)

# The hostile standby, in slot-a of the card's frontend dir.
d=$(sndhostile_dom drvh "$SEED" "$SECS") || fail "create drvh"
VSND_FE=$fe/shadow/slot-a vsnd_add "$guest" "$d" "$DEV"
sndback_go drvh "$guest" "$DEV"
xenstore-write "$fe/shadow/standby" slot-a || fail "write $fe/shadow/standby"
sndhostile_wait drvh "$SECS"
out=$TEST_TMP/drvh.out
# Its own verdicts are for a live connection's reports: here only what the
# frontend did with its standby counts.
acts=$(grep -o '\] HOSTILE [a-z-]*:' "$out" | sed 's/.* \([a-z-]*\):/\1/' | sort | uniq -c | tr -s ' ' |
    tr '\n' ',')
breaking=$(grep '\] HOSTILE [a-z-]*:' "$out" | grep -cv 'HOSTILE \(scribble\|refuse\):' || true)
dropped=$(grep -c 'standby backend .*\(misbehaved while held\|went \|did not connect\)\|standby domain .* is gone' \
    "$TEST_TMP/guest.log" || true)
held=$(grep -c 'standby connection up in slot-a' "$TEST_TMP/guest.log" || true)
log "acts:${acts:- none}; $breaking breaking a rule; the frontend held the standby $held times, dropped it $dropped"
[ "$breaking" -eq 0 ] || [ "$dropped" -ge 1 ] || fail "$breaking rule-breaking acts, the standby never dropped"

wait $apid || fail "aplay failed: $(cat "$TEST_TMP/aplay.err")"
wall=$(echo "$(date +%s.%N) - $s" | bc)
expect_ratio "aplay's wall time vs $DUR s of audio" "$wall" $DUR 0.95 1.15
snd_guest_alive
expect_eq "recoveries of the live card" "$(sf_key "$guest" shadow/recoveries)" 0
expect_eq "the live card's reports" "$(sf_key "$guest" shadow/report)" ""
expect_eq "the live card's state" "$(sf_key "$guest" shadow/state)" live
sleep 1 # sndback plays out its tail
check "$REC"
expect_summary gaps 0 repeats 0 channel_errors 0 corrupt 0 format_errors 0
snd_sanitizer_check
exit 0
