#!/usr/bin/env bash
# bench/parts/snd.sh - the sound class: the audio gap of a driver domain's
# death, and what the shadow PCM costs in CPU.
#
# Gap: shadowd with a sound driver domain (understudy-agent + sndback playing
# into the clocked test PCM, which records what it played), a guest running
# understudy-sndfront, aplay playing frame-counter audio through the shadow
# PCM in 10 ms periods; the driver domain is crashed SND_BENCH_CRASHES times
# (default 20) with
# a cold restart, then as many times with a warm standby (`standby on`).
# Each gap is measured twice: from the recording (the frames missing between
# the last one the dead sndback played and the first the new one did, as
# stream ms: sndcheck) and as the frontend reports it (shadow/last-gap).
# Rows: snd.gap.<cold|warm>.{recorded,reported} with p50/p99 (ms), and the
# warm/cold ratio of the recorded p99.
#
# CPU: the same program playing the same audio for SND_BENCH_SECONDS (8) to a
# plain clocked PCM (the test PCM loaded into the program) and through the
# shadow PCM (the plugin in the program, and understudy-sndfront): CPU
# seconds (user + system) of the program, plus the daemon's over the same
# run; snd.cpu.<mpg123|aplay> with the plain PCM as baseline. mpg123 decodes
# an mp3 (a player's real work); aplay copies a WAV (nothing but the audio
# path, so the shadow's share shows in full). The driver domain's sndback is
# not counted: any driver domain has one.
# Run by bench/run-bench with BUILD, RES, TMP and XENSIM exported.
set -euo pipefail
N=${SND_BENCH_CRASHES:-20}
SECS=${SND_BENCH_SECONDS:-8}
SHADOWD=$BUILD/bin/shadowd SHADOWCTL=$BUILD/bin/shadowctl AGENT=$BUILD/bin/understudy-agent
SNDBACK=$BUILD/bin/sndback SNDFRONT=$BUILD/bin/understudy-sndfront XSDEV=$BUILD/tests/dom0/xsdev
PCM_SO=$BUILD/lib/libasound_module_pcm_understudy.so USCLOCK_SO=$BUILD/tests/snd/libasound_module_pcm_usclock.so
SNDGEN=$BUILD/tests/snd/sndgen SNDCHECK=$BUILD/tests/snd/sndcheck
for f in "$SHADOWD" "$SHADOWCTL" "$AGENT" "$SNDBACK" "$SNDFRONT" "$XSDEV" "$SNDGEN" "$SNDCHECK" \
    "$PCM_SO" "$USCLOCK_SO"; do
    [ -e "$f" ] || { echo "snd bench: $f not built (libasound2-dev missing?)"; exit 1; }
done
for c in aplay mpg123 lame sox jq; do
    command -v "$c" >/dev/null || { echo "snd bench: $c not installed (make deps)"; exit 1; }
done
W=$TMP/snd-bench
SD_PID= APID=
cleanup() {
    [ -z "$APID" ] || kill "$APID" 2>/dev/null || true
    [ -z "$SD_PID" ] || kill -TERM "$SD_PID" 2>/dev/null || true
    XENSIM_DIR=$W/sim "$XENSIM" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
die() {
    echo "snd bench: $*" >&2
    tail -n 20 "$W"/*.log >&2 2>/dev/null || true
    exit 1
}
until_ok() {
    local to=$1 i
    shift
    for ((i = 0; i < to * 50; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.02; done
    return 1
}
sdq() { "$SHADOWCTL" -s "$W/run/shadowd.sock" status --json | jq -r ".domains[0] | $1"; }
# (until_ok runs its command again each time: a function, not a $(...) read once)
_up() { [ "$(sdq '"\(.state) \(.heartbeat.seen)"')" = "up true" ]; }
fe() { xenstore-read "/local/domain/$G/device/vsnd/0/$1" 2>/dev/null; }
pct() {
    awk -v c="$2" '{ print $c }' "$1" | sort -n |
        awk -v p="$3" '{ v[NR] = $1 } END { r = int((p * NR + 99) / 100); if (r < 1) r = 1; print v[r] }'
}
asoundrc() {
    export HOME=$W/home
    mkdir -p "$HOME"
    cat >"$HOME/.asoundrc" <<EOF
pcm_type.usclock { lib "$USCLOCK_SO" }
pcm.clocked { type usclock; $1 }
pcm_type.understudy { lib "$PCM_SO" }
pcm.understudy { type understudy; socket "$W/vsnd.sock" }
EOF
}

_ready() {
    [ "$(sdq '"\(.state) \(.heartbeat.seen) \(.streak) \(.standby.state // "off")"')" = \
        "up true 0 $1" ] && [ "$(fe shadow/state)" = live ] && [ "$(fe shadow/recoveries)" = "$2" ]
}
_live() { [ "$(fe shadow/state)" = live ]; }
_recovered() { [ "$(fe shadow/state)" = live ] && [ "$(fe shadow/recoveries)" = "$1" ] && [ "$(sdq .state)" = up ]; }

# start_card MODE: shadowd (standby off/on), its sound driver domain, the guest
# with its frontend, the card live. Sets G.
start_card() {
    local standby=$1 d
    rm -rf "$W/sim" "$W/state" "$W/run"
    export XENSIM_DIR=$W/sim
    "$XENSIM" start
    eval "$("$XENSIM" env 0)"
    cat >"$W/shadowd.conf" <<EOF
state-dir $W/state
run-dir $W/run
xensim-dir $XENSIM_DIR
domain drv {
    driver xensim
    command $AGENT --handler vsnd=$SNDBACK --heartbeat-ms 100
    log $W/drv.log
    heartbeat-timeout 1s
    boot-timeout 10s
    restart-budget 64
    stable-after 100ms
    reconnect-timeout 10s
    standby $standby
}
EOF
    "$SHADOWD" -c "$W/shadowd.conf" >>"$W/shadowd.log" 2>&1 &
    SD_PID=$!
    until_ok 10 "$SHADOWCTL" -s "$W/run/shadowd.sock" status || die "shadowd did not start"
    until_ok 15 _up || die "drv not up"
    d=$(sdq .domid)
    G=$("$XENSIM" create --name guest --log "$W/guest.log" -- sh -c \
        'while [ ! -e "$1" ]; do sleep 0.02; done; shift; exec "$@"' sh "$W/go" "$SNDFRONT" \
        --device device/vsnd/0 --socket "$W/vsnd.sock" --deadline-ms 1000)
    local fe_dir=/local/domain/$G/device/vsnd/0 be_dir=/local/domain/$d/backend/vsnd/$G/0
    "$XSDEV" "$fe_dir" "n$G,r$d" backend="$be_dir" backend-id="$d" state=1 shadow/generation=0 \
        short-name=Bench sample-rates=44100,48000 sample-formats=s16_le channels-max=2 \
        buffer-size=262144 0/name=out 0/0/type=p 0/0/unique-id=alsa:clocked >/dev/null
    "$XSDEV" "$be_dir" "n$d,r$G" frontend="$fe_dir" frontend-id="$G" online=1 state=1 >/dev/null
    touch "$W/go"
    until_ok 15 _live || die "the card did not come up"
}
stop_card() {
    kill -TERM "$SD_PID" && wait "$SD_PID" || true
    SD_PID=
    "$XENSIM" stop >/dev/null 2>&1 || true
    rm -f "$W/go"
}

# gaps MODE: N crashes under aplay; $W/MODE.tsv: recorded-ms reported-ms a line.
gaps() {
    local mode=$1 standby=off want=off i
    [ "$mode" = warm ] && standby=on want=ready
    asoundrc "file \"$W/$mode.usck\""
    start_card $standby
    local secs=$((N * 2 + 10))
    "$SNDGEN" -r 48000 -f S16_LE -c 2 -d $secs -o "$W/long.wav"
    # 10 ms periods, as a game or a call does: the sink records whole periods,
    # so a gap is measured to within one.
    aplay -q -D understudy --period-time=10000 --buffer-time=80000 "$W/long.wav" \
        2>"$W/aplay.err" &
    APID=$!
    : >"$W/$mode.reported"
    for ((i = 0; i < N; i++)); do
        until_ok 20 _ready "$want" "$i" || die "$mode: not ready for crash $((i + 1))"
        sleep "1.$((RANDOM % 10))"
        "$XENSIM" crash "$(sdq .domid)"
        until_ok 30 _recovered $((i + 1)) || die "$mode: crash $((i + 1)) not recovered"
        fe shadow/last-gap >>"$W/$mode.reported"
    done
    sleep 1 # the last sndback plays some of it
    kill "$APID" 2>/dev/null || true
    wait "$APID" 2>/dev/null || true
    APID=
    stop_card
    "$SNDCHECK" "$W/$mode.usck" >"$W/$mode.check" || true
    grep '^gap ' "$W/$mode.check" | sed -n 's/.* stream_ms=\([0-9.]*\).*/\1/p' >"$W/$mode.recorded"
    [ "$(wc -l <"$W/$mode.recorded")" -eq "$N" ] ||
        die "$mode: $(wc -l <"$W/$mode.recorded") gaps in the recording for $N crashes"
    grep -q 'repeats=0 ' "$W/$mode.check" || die "$mode: audio repeated: $(grep summary "$W/$mode.check")"
    paste -d' ' "$W/$mode.recorded" "$W/$mode.reported" >"$W/$mode.tsv"
}

# cpu PROGRAM PCM: CPU seconds (user + system) of PROGRAM playing to PCM, plus
# understudy-sndfront's over the same run when PCM is the shadow one (its
# schedstat: ns, where /proc/PID/stat counts 10 ms ticks), and the daemon's
# wakeups (voluntary context switches) in that run.
dstat() { echo "$(awk '{ print $1 }' "/proc/$1/schedstat") $(awk '/^voluntary_ctxt/ { print $2 }' "/proc/$1/status")"; }
cpu_run() {
    local prog=$1 pcm=$2 d0="0 0" d1="0 0" t
    local dpid
    dpid=$(pgrep -f "understudy-sndfront --device device/vsnd/0 --socket $W/vsnd.sock" | head -1)
    [ "$pcm" = understudy ] && d0=$(dstat "$dpid")
    case $prog in
    mpg123) t=$( { TIMEFORMAT='%U %S'; time mpg123 -q -o alsa -a "$pcm" "$W/cpu.mp3" >/dev/null 2>&1; } 2>&1) ;;
    aplay) t=$( { TIMEFORMAT='%U %S'; time aplay -q -D "$pcm" "$W/cpu.wav" >/dev/null 2>&1; } 2>&1) ;;
    esac
    [ "$pcm" = understudy ] && d1=$(dstat "$dpid")
    awk -v t="$t" -v d0="$d0" -v d1="$d1" 'BEGIN { split(t, a, " "); split(d0, x, " ");
        split(d1, y, " "); printf "%.4f %d\n", a[1] + a[2] + (y[1] - x[1]) / 1e9, y[2] - x[2] }'
}

echo "== snd: audio gap of a crashed sound driver domain ($N crashes each, cold restart vs warm standby), shadow PCM CPU"
mkdir -p "$W"
gaps cold
gaps warm
for mode in cold warm; do
    for col in 1:recorded 2:reported; do
        p50=$(pct "$W/$mode.tsv" "${col%%:*}" 50) p99=$(pct "$W/$mode.tsv" "${col%%:*}" 99)
        printf '{"bench": "snd.gap.%s.%s", "metric": "ms", "value": %s, "p50": %s, "p99": %s}\n' \
            "$mode" "${col#*:}" "$p50" "$p50" "$p99" >>"$RES"
        echo "snd: gap $mode ${col#*:}: p50 $p50 ms, p99 $p99 ms"
    done
done
c=$(pct "$W/cold.tsv" 1 99) w=$(pct "$W/warm.tsv" 1 99)
printf '{"bench": "snd.gap.warm_vs_cold.p99", "metric": "ms", "value": %s, "baseline": "snd.gap.cold.recorded.p99", "baseline_value": %s, "ratio": %s}\n' \
    "$w" "$c" "$(awk -v w="$w" -v c="$c" 'BEGIN { printf "%.3f", (c > 0 ? w / c : 0) }')" >>"$RES"

# CPU: one card, no faults; each program and PCM three times, interleaved, the
# least CPU of each kept (noise only ever adds).
asoundrc ""
start_card off
sox -n -r 44100 -c 2 -b 16 "$W/cpu-src.wav" synth "$SECS" sine 440 sine 660 vol 0.5
lame --quiet "$W/cpu-src.wav" "$W/cpu.mp3"
"$SNDGEN" -r 44100 -f S16_LE -c 2 -d "$SECS" -o "$W/cpu.wav"
for prog in mpg123 aplay; do
    plain=999 shadow=999 wakes=
    for _ in 1 2 3; do
        v=$(cpu_run $prog clocked)
        plain=$(awk -v a="$plain" -v b="${v% *}" 'BEGIN { print (b < a ? b : a) }')
        v=$(cpu_run $prog understudy)
        shadow=$(awk -v a="$shadow" -v b="${v% *}" 'BEGIN { print (b < a ? b : a) }')
        wakes="$wakes ${v#* }"
    done
    # the daemon's wakeups a second of audio, the median of the three runs
    wps=$(echo $wakes | tr ' ' '\n' | sort -n | sed -n 2p | awk -v s="$SECS" '{ printf "%.1f", $1 / s }')
    ratio=$(awk -v s="$shadow" -v p="$plain" 'BEGIN { printf "%.3f", (p > 0 ? s / p : 0) }')
    printf '{"bench": "snd.cpu.%s", "metric": "cpu_s", "value": %s, "baseline": "plain-clocked-pcm", "baseline_value": %s, "ratio": %s}\n' \
        "$prog" "$shadow" "$plain" "$ratio" >>"$RES"
    printf '{"bench": "snd.wakeups.%s", "metric": "per_s", "value": %s}\n' "$prog" "$wps" >>"$RES"
    echo "snd: $prog CPU for $SECS s of audio: shadow PCM $shadow s, plain PCM $plain s, ratio $ratio; understudy-sndfront woke $wps times a second"
done
stop_card
