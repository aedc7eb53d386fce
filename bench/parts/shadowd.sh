#!/usr/bin/env bash
# bench/parts/shadowd.sh - recovery time of a crashed driver domain, per
# phase, with shadowd doing all of it: cold restart (a new domain is
# created) and warm standby (`standby on`: a standby booted ahead is
# promoted). The real disk class: the agent and blkback in the driver
# domain, the shadow blkfront library (blkfe-driver, tests/frontends) in the
# guest under a verifying workload, so each crash lands on I/O in flight.
#
# Phases: detect, restart, rewire from shadowd's history; replay from the
# frontend's shadow/last-recovery; reconnect = shadowd's reconnect phase
# minus the replay (shadowd sees the device back once the frontend is live,
# which is after its replay); total = shadowd's total (first sign to live).
# Rows: shadowd.<cold|warm>.<phase>.<p50|p99> in ms; the frontend's
# first-replayed (the backend's last sign of life -> the first replayed
# request done) as shadowd.<mode>.first_replayed.<p50|p99>; then the
# warm/cold ratio of the total p50 and p99. Run by bench/run-bench with
# BUILD, RES, TMP and XENSIM exported; SHADOWD_BENCH_CRASHES (default 30)
# crashes per mode.
set -euo pipefail
N=${SHADOWD_BENCH_CRASHES:-30}
SHADOWD=$BUILD/bin/shadowd SHADOWCTL=$BUILD/bin/shadowctl AGENT=$BUILD/bin/understudy-agent
BLKBACK=$BUILD/bin/blkback DRIVER=$BUILD/tests/frontends/blkfe-driver XSDEV=$BUILD/tests/dom0/xsdev
for f in "$SHADOWD" "$SHADOWCTL" "$AGENT" "$BLKBACK" "$DRIVER" "$XSDEV"; do
    [ -x "$f" ] || { echo "shadowd bench: $f not built"; exit 1; }
done
DEV=51712
W=$TMP/shadowd-bench
SD_PID=
# Whatever happens, leave no shadowd and no simulator of ours behind.
cleanup() {
    [ -z "$SD_PID" ] || kill -TERM "$SD_PID" 2>/dev/null || true
    XENSIM_DIR=$W/sim "$XENSIM" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT

die() {
    echo "shadowd bench: $*" >&2
    tail -n 20 "$W"/*.log >&2 2>/dev/null || true
    exit 1
}
# until SECONDS CMD...: poll CMD every 20 ms, bounded.
until_ok() {
    local to=$1 i
    shift
    for ((i = 0; i < to * 50; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.02; done
    return 1
}
sdq() { "$SHADOWCTL" -s "$W/run/shadowd.sock" status --json | jq -r ".domains[0] | $1"; }
# (until_ok runs its command again each time: a function, not a $(...) read once)
_up() { [ "$(sdq '"\(.state) \(.heartbeat.seen)"')" = "up true" ]; }
fe() { xenstore-read "/local/domain/$G/device/vbd/$DEV/$1" 2>/dev/null; }

# Ready for the next crash: up, heartbeat seen, the backoff streak over (so
# no backoff is measured), the standby ready (warm), the frontend live with
# i recoveries and I/O moving.
_ready() {
    local want_sb=$1 i=$2
    [ "$(sdq '"\(.state) \(.heartbeat.seen) \(.streak) \(.standby.state // "off")"')" = \
        "up true 0 $want_sb" ] || return 1
    [ "$(fe shadow/state)" = live ] && [ "$(fe shadow/recoveries)" = "$i" ]
}
_recovered() {
    [ "$(fe shadow/state)" = live ] && [ "$(fe shadow/recoveries)" = "$1" ] &&
        [ "$(sdq .state)" = up ]
}

# run_mode cold|warm: N crashes; one line per crash in $W/<mode>.tsv:
# detect restart rewire reconnect replay total (ms).
run_mode() {
    local mode=$1 standby=off want_sb=off
    [ "$mode" = warm ] && standby=on want_sb=ready
    rm -rf "$W" && mkdir -p "$W"
    export XENSIM_DIR=$W/sim
    "$XENSIM" start
    eval "$("$XENSIM" env 0)"
    cat >"$W/shadowd.conf" <<EOF
state-dir $W/state
run-dir $W/run
xensim-dir $XENSIM_DIR
domain drv {
    driver xensim
    command $AGENT --handler vbd=$BLKBACK --heartbeat-ms 100
    log $W/drv.log
    heartbeat-timeout 1s
    boot-timeout 10s
    restart-budget 64
    restart-window 2s
    stable-after 100ms
    reconnect-timeout 10s
    standby $standby
}
EOF
    "$SHADOWD" -c "$W/shadowd.conf" >>"$W/shadowd.log" 2>&1 &
    SD_PID=$!
    until_ok 10 "$SHADOWCTL" -s "$W/run/shadowd.sock" status || die "shadowd did not start"
    until_ok 15 _up || die "drv not up"
    local d img=$W/disk.img
    d=$(sdq .domid)
    truncate -s 64M "$img"
    G=$("$XENSIM" create --name guest --log "$W/guest.log" -- sh -c \
        'while [ ! -e "$1" ]; do sleep 0.02; done; shift; exec "$@"' sh "$W/go" "$DRIVER" \
        --device "device/vbd/$DEV" --backing "$img" --seconds 3600 --threads 2 --region-mib 8 \
        --deadline-ms 5000 --seed 7)
    local fe_dir=/local/domain/$G/device/vbd/$DEV be_dir=/local/domain/$d/backend/vbd/$G/$DEV
    "$XSDEV" "$fe_dir" "n$G,r$d" backend="$be_dir" backend-id="$d" state=1 \
        virtual-device=$DEV device-type=disk shadow/generation=0 >/dev/null
    "$XSDEV" "$be_dir" "n$d,r$G" frontend="$fe_dir" frontend-id="$G" online=1 state=1 \
        dev=xvda type=phy mode=w device-type=disk params="$img" >/dev/null
    touch "$W/go"
    until_ok 30 grep -q DRIVER-START "$W/guest.log" || die "the workload did not start"
    : >"$W/$mode.tsv"
    local i
    for ((i = 0; i < N; i++)); do
        until_ok 20 _ready "$want_sb" "$i" || die "$mode: not ready for crash $((i + 1))"
        sleep 0.1 # I/O in flight when the domain dies
        "$XENSIM" crash "$(sdq .domid)"
        until_ok 30 _recovered $((i + 1)) || die "$mode: crash $((i + 1)) not recovered"
        local h fl replay
        h=$("$SHADOWCTL" -s "$W/run/shadowd.sock" history --json | jq -c '.[-1]')
        [ "$(echo "$h" | jq -r '"\(.ok) \(.warm)"')" = "true $([ "$mode" = warm ] && echo true || echo false)" ] ||
            die "$mode: recovery $((i + 1)) was not a $mode one: $h"
        fl=$(fe shadow/last-recovery)
        replay=$(echo "$fl" | sed -n 's/.*replay=\([0-9]*\).*/\1/p')
        [ -n "$replay" ] || die "no replay in the frontend's last-recovery '$fl'"
        echo "$h" | jq -r --argjson rp "$replay" \
            '"\(.detect_ms) \(.restart_ms) \(.rewire_ms) \([.reconnect_ms - $rp, 0] | max) \($rp) \(.total_ms)"' \
            >>"$W/$mode.tsv"
    done
    grep -q DRIVER-FAIL "$W/guest.log" && die "$mode: the workload saw an error"
    kill -TERM "$SD_PID" && wait "$SD_PID" || true
    SD_PID=
    "$XENSIM" stop >/dev/null 2>&1 || true
    mkdir -p "$TMP/shadowd-results" && cp "$W/$mode.tsv" "$TMP/shadowd-results/"
    # The frontend's own fault -> first replayed request done (issue 14's
    # xensim goal), in the recoveries that replayed anything.
    grep -ao 'first-replayed=[0-9]*' "$W/guest.log" | cut -d= -f2 >"$TMP/shadowd-results/$mode-first.txt" || true
}

# pct FILE COLUMN P: the P-th percentile (nearest rank) of a column.
pct() {
    awk -v c="$2" '{ print $c }' "$1" | sort -n |
        awk -v p="$3" '{ v[NR] = $1 } END { r = int((p * NR + 99) / 100); if (r < 1) r = 1; print v[r] }'
}

echo "== shadowd: recovery of a crashed driver domain per phase, cold restart vs warm standby ($N crashes each, blkback + shadow blkfront)"
run_mode cold
run_mode warm
R=$TMP/shadowd-results
phases=(detect restart rewire reconnect replay total)
for mode in cold warm; do
    for k in "${!phases[@]}"; do
        for p in 50 99; do
            v=$(pct "$R/$mode.tsv" $((k + 1)) $p)
            printf '{"bench": "shadowd.%s.%s.p%s", "metric": "ms", "value": %s}\n' \
                "$mode" "${phases[$k]}" "$p" "$v" >>"$RES"
        done
    done
done
for mode in cold warm; do
    f=$R/$mode-first.txt
    [ -s "$f" ] || continue
    declare -A fr=([50]=$(pct "$f" 1 50) [99]=$(pct "$f" 1 99))
    for p in 50 99; do
        printf '{"bench": "shadowd.%s.first_replayed.p%s", "metric": "ms", "value": %s}\n' \
            "$mode" "$p" "${fr[$p]}" >>"$RES"
    done
    echo "shadowd: $mode first replayed request done (from the backend's last sign of life): p50 ${fr[50]} ms, p99 ${fr[99]} ms over $(wc -l <"$f") recoveries that replayed"
done
# warm/cold of the total (what a guest sees) and of the restart phase (what
# the standby replaces).
for col in 6:total 2:restart; do
    for p in 50 99; do
        c=$(pct "$R/cold.tsv" "${col%%:*}" $p) w=$(pct "$R/warm.tsv" "${col%%:*}" $p)
        ratio=$(awk -v w="$w" -v c="$c" 'BEGIN { printf "%.3f", (c > 0 ? w / c : 0) }')
        printf '{"bench": "shadowd.warm_vs_cold.%s.p%s", "metric": "ms", "value": %s, "baseline": "shadowd.cold.%s.p%s", "baseline_value": %s, "ratio": %s}\n' \
            "${col#*:}" "$p" "$w" "${col#*:}" "$p" "$c" "$ratio" >>"$RES"
        echo "shadowd: ${col#*:} p$p warm $w ms / cold $c ms = $ratio"
    done
done
