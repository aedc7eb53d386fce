#!/usr/bin/env bash
# A hot standby (schema.md, "The hot standby's connection"): the shadow PCM
# holds a second, idle connection to a standby sound driver domain, made in a
# slot of its frontend dir, with aplay's stream OPENed on it ahead and never
# started (so each promotion starts it there: no OPEN in the gap, and the
# standby's sndback opened it once). While aplay plays 20 s of frame-counter audio, a
# stand-in toolstack crashes the serving domain four times and promotes the
# standby each time (pause, FE/backend to the slot's backend, generation),
# then attaches a fresh standby in the other slot. Each recovery is a switch
# with no handshake (the log says so; the standby's sndback was Connected
# before the crash), its streams reopen at once: aplay exits 0 in its normal
# time, the recording has one gap per fault and nothing else. How long a gap
# is depends here on the stand-in toolstack's shell (a process per xenstore
# call); `make bench` measures it with shadowd (bench/README.md, "Sound").
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
snd_fe_setup --deadline-ms 1000
fe=$(vsnd_fe "$guest" "$DEV")
sb=$(attach_standby "$guest" drv1 slot-a)
expect_eq "slot-a's backend" "$(xenstore-read "$fe/shadow/slot-a/backend-id")" "$sb"
grep -q "standby connection up in slot-a" "$TEST_TMP/guest.log" || fail "no standby connection logged"
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d 20 -o "$TEST_TMP/a.wav" || fail "sndgen"
aplay -q -D understudy "$TEST_TMP/a.wav" 2>"$TEST_TMP/aplay.err" &
apid=$!
s=$(date +%s.%N)
serving=drv0 slot=slot-a next=slot-b old=$fe
# The failed connection's stream keys leave its dir after the switch (sn_forget).
_old_keys_gone() { ! xenstore-read "$old/0/0/ring-ref" >/dev/null 2>&1; }
for i in 1 2 3 4; do
    sleep "$(echo "2.5 + $((RANDOM % 10)) / 10" | bc -l)"
    kill -0 $apid 2>/dev/null || fail "aplay ended before fault $i"
    "$XENSIM" crash "$serving" >/dev/null
    promote_standby "$serving" "$guest" "$sb"
    wait_for 10 sf_live_n "$guest" "$i"
    gap=$(sf_key "$guest" shadow/last-gap)
    log "fault $i: standby domain $sb in $slot promoted: $(sf_key "$guest" shadow/last-recovery) gap=$gap ms"
    [ "$(grep -c "switched to the standby connection" "$TEST_TMP/guest.log")" = "$i" ] ||
        fail "recovery $i was not a switch to the held connection"
    # aplay's stream was open on the standby ahead (sn_standby.c): started, not reopened.
    [ "$(grep -c "starting 1 stream opened on it ahead, reopening 0" "$TEST_TMP/guest.log")" = "$i" ] ||
        fail "recovery $i reopened the stream instead of starting the one open on the standby"
    [ "$(grep -c 'stream 0/0 open:' "$TEST_TMP/drv$i.log")" = 1 ] ||
        fail "the standby's sndback (drv$i) opened the stream $(grep -c 'stream 0/0 open:' "$TEST_TMP/drv$i.log") times"
    expect_eq "FE/state after the live connection left FE" "$(xenstore-read "$fe/state")" 6
    wait_for 5 _old_keys_gone
    old=$fe/shadow/$slot
    serving=drv$i
    sb=$(attach_standby "$guest" "drv$((i + 1))" "$next")
    t=$slot slot=$next next=$t
done
wait $apid || fail "aplay failed: $(cat "$TEST_TMP/aplay.err")"
wall=$(echo "$(date +%s.%N) - $s" | bc)
expect_ratio "aplay's wall time vs 20 s of audio" "$wall" 20 0.97 1.07
sleep 1
check "$REC"
expect_summary repeats 0 channel_errors 0 corrupt 0 format_errors 0 gaps 4
mapfile -t gaps < <(snd_gaps)
for i in 0 1 2 3; do
    read -r missing ms wall_ms <<<"${gaps[$i]}"
    log "gap $((i + 1)): $missing frames, $ms ms of audio (wall $wall_ms ms)"
    [ "${ms%.*}" -lt 1000 ] || fail "gap $((i + 1)) of $ms ms"
done
expect_eq "recoveries" "$(sf_key "$guest" shadow/recoveries)" 4
# The standby held idle: removing FE/shadow/standby drops it (keys gone from the slot).
xenstore-rm "$fe/shadow/standby"
_dropped() { ! xenstore-read "$fe/shadow/$slot/0/0/ring-ref" >/dev/null 2>&1; }
wait_for 5 _dropped
"$XENSIM" info guest | grep -q state=running || fail "the frontend died"
snd_sanitizer_check
exit 0
