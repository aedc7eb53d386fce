#!/usr/bin/env bash
# The sound class end to end, with shadowd doing all detection, restart and
# rewiring: one driver domain (understudy-agent + sndback, started by
# shadowd) serving two guests, each running understudy-sndfront, each playing
# 24 s of frame-counter audio with aplay through the shadow PCM into a
# clocked PCM of its own (so each guest's audio is recorded apart). Faults,
# SND_FAULTS of them (default 4): the driver domain crashes, is destroyed,
# crashes again and its replacement crashes as soon as shadowd has created it
# (one recovery with two restarts), then hangs (sndback told to answer nothing:
# the frontends see their requests and positions stop, report, and shadowd
# restarts the domain on their corroborated reports).
# Both aplays exit 0 in their normal time; each recording is the audio with
# exactly one gap per recovery and nothing else (no repeat, no channel or
# format error); every gap is listed, with the frontends' own figure for it;
# shadowctl check is clean after each recovery.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../dom0/dom0-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/../frontends/snd-functions.sh"
requires jq xenstore-read
FAULTS=${SND_FAULTS:-4}
snd_setup
[ -x "$SNDBACK" ] && [ -x "$SNDFRONT" ] && [ -f "$SND_PCM_SO" ] || skip "the sound class is not built"
[ -x "$AGENT" ] || skip "understudy-agent not built"
# One clocked PCM per guest, each with its own recording.
cat >"$HOME/.asoundrc" <<EOF
pcm_type.usclock { lib "$USCLOCK_SO" }
pcm.clocked_a { type usclock; file "$TEST_TMP/rec-a.usck" }
pcm.clocked_b { type usclock; file "$TEST_TMP/rec-b.usck" }
pcm_type.understudy { lib "$SND_PCM_SO" }
pcm.card_a { type understudy; socket "$TEST_TMP/vsnd-a.sock" }
pcm.card_b { type understudy; socket "$TEST_TMP/vsnd-b.sock" }
EOF
start_sim
on_exit '[ "$rc" -eq 0 ] || snd_dump_logs'
sd_conf
sd_domain drv "command $AGENT --handler vsnd=$SNDBACK --heartbeat-ms 100" "heartbeat-timeout 1s" \
    "restart-budget 16" "backoff-initial 100ms" "backoff-max 400ms" "reconnect-timeout 20s"
sd_start
d=$(sd_wait_up drv)

# guest x: understudy-sndfront on device/vsnd/0 and its socket; its card's one
# playback stream plays to clocked_x.
guest() {
    local x=$1 g
    g=$(new_dom "guest-$x" sh -c 'f=$1; shift; while [ ! -e "$f" ]; do sleep 0.02; done; exec "$@"' \
        sh "$TEST_TMP/go.guest-$x" "$SNDFRONT" --device device/vsnd/0 --socket "$TEST_TMP/vsnd-$x.sock" \
        --deadline-ms 1000)
    # As libxl does: each dir with its permissions in one transaction, the
    # frontend (with the card) first: the agent starts sndback at once.
    "$XSDEV" "$(vsnd_fe "$g" 0)" "n$g,r$d" backend="$(vsnd_be "$d" "$g" 0)" backend-id="$d" \
        state=1 shadow/generation=0 short-name="Card $x" sample-rates=48000 \
        sample-formats=s16_le channels-max=2 buffer-size=262144 0/name=out 0/0/type=p \
        "0/0/unique-id=alsa:clocked_$x" || fail "the frontend dir of guest $x"
    "$XSDEV" "$(vsnd_be "$d" "$g" 0)" "n$d,r$g" frontend="$(vsnd_fe "$g" 0)" frontend-id="$g" \
        online=1 state=1 || fail "the backend dir of guest $x"
    touch "$TEST_TMP/go.guest-$x"
    echo "$g"
}
a=$(guest a)
b=$(guest b)
key() { xenstore-read "$(vsnd_fe "$1" 0)/$2" 2>/dev/null || true; }
live_n() { [ "$(key "$1" shadow/state)" = live ] && [ "$(key "$1" shadow/recoveries)" -ge "$2" ] 2>/dev/null; }
wait_for 10 live_n "$a" 0
wait_for 10 live_n "$b" 0
wait_for 10 sd_recorded_is drv 2

SECS=24
"$SNDGEN" -r 48000 -f S16_LE -c 2 -d $SECS -o "$TEST_TMP/a.wav" || fail "sndgen"
aplay -q -D card_a "$TEST_TMP/a.wav" 2>"$TEST_TMP/aplay-a.err" &
pa=$!
aplay -q -D card_b "$TEST_TMP/a.wav" 2>"$TEST_TMP/aplay-b.err" &
pb=$!
s=$(date +%s.%N)
_replaced() { local n; n=$(sd_domid drv) && [ -n "$n" ] && [ "$n" != "$1" ]; }
# Each frontend live after one more recovery than it had before the fault (a
# crash during recovery is one recovery or two, as the frontend met it).
both_live() { live_n "$a" "$1" && live_n "$b" "$2" && _sd_settled; }
gaps_a=() gaps_b=()
for i in $(seq 1 "$FAULTS"); do
    sleep "$(echo "2 + 0.$((RANDOM % 10))" | bc)"
    kill -0 $pa 2>/dev/null && kill -0 $pb 2>/dev/null || fail "aplay ended before fault $i"
    d=$(sd_domid drv)
    ra=$(key "$a" shadow/recoveries) rb=$(key "$b" shadow/recoveries)
    case $((i % 4)) in
    1) what=crash; "$XENSIM" crash "$d" >/dev/null ;;
    2) what=destroy; "$XENSIM" destroy "$d" >/dev/null ;;
    3) what="crash, and its replacement crashes"
       "$XENSIM" crash "$d" >/dev/null
       wait_for 10 _replaced "$d"
       "$XENSIM" crash "$(sd_domid drv)" >/dev/null ;;
    0) what=hang; sdctl inject drv hang >/dev/null || fail "inject hang" ;;
    esac
    wait_for 30 both_live $((ra + 1)) $((rb + 1))
    wait_for 10 sd_state_is drv up
    [ "$(sd_domid drv)" != "$d" ] || fail "fault $i ($what): no new driver domain"
    expect_check_clean
    gaps_a+=("$(key "$a" shadow/last-gap)") gaps_b+=("$(key "$b" shadow/last-gap)")
    log "fault $i ($what): a '$(key "$a" shadow/report)' $(key "$a" shadow/last-recovery) gap ${gaps_a[-1]} ms;" \
        "b gap ${gaps_b[-1]} ms; shadowd $(sdctl history --json | jq -c '.[-1] | {total_ms, restarts}')"
done
wait $pa || fail "aplay a failed: $(cat "$TEST_TMP/aplay-a.err")"
wait $pb || fail "aplay b failed: $(cat "$TEST_TMP/aplay-b.err")"
wall=$(echo "$(date +%s.%N) - $s" | bc)
expect_ratio "the aplays' wall time vs $SECS s of audio" "$wall" $SECS 0.95 1.1
sleep 1 # the last sndback plays out the tails
for x in a b; do
    check "$TEST_TMP/rec-$x.usck"
    expect_summary repeats 0 channel_errors 0 corrupt 0 format_errors 0 gaps "$FAULTS"
    mapfile -t gaps < <(snd_gaps)
    declare -n said=gaps_$x
    for i in $(seq 0 $((FAULTS - 1))); do
        read -r missing ms wall_ms <<<"${gaps[$i]}"
        log "guest $x, gap $((i + 1)): $missing frames, $ms ms of audio (wall $wall_ms ms); its frontend said ${said[$i]} ms"
        dlt=$(( said[i] - ${ms%.*} ))
        [ "$dlt" -ge -1 ] && [ "$dlt" -le 126 ] ||
            fail "guest $x, gap $((i + 1)): the frontend said ${said[$i]} ms, the recording $ms ms"
    done
done
expect_eq "shadowd recoveries" "$(sdctl history --json | jq '[.[] | select(.ok)] | length')" "$FAULTS"
snd_sanitizer_check
exit 0
