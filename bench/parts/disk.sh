#!/usr/bin/env bash
# bench/parts/disk.sh - the disk class, in one run (run by bench/run-bench with
# BUILD, RES, TMP, XENSIM; DISK_RUNTIME=S seconds per fio job, DISK_KILLS=N).
#
# fio (Debian's, engine nbd) against the shadow blkfront's NBD export: nbdkit
# with our plugin in a guest domain, over blkback (cache=none: O_DIRECT) in a
# driver domain that shadowd started. Three configurations, same backing file,
# same device, same fio jobs (nbdkit is restarted to change the plugin's mode):
#   shadow      the plugin as shipped (journal, retention of acknowledged
#               writes until a flush, private copies of write data)
#   shadow-off  the plugin with shadow=off: the same path, no retention and no
#               private copies (what a plain blkfront keeps: in-flight requests)
#   direct-io   fio with libaio and O_DIRECT on the backing file itself
# Jobs: sequential read and write (1 MiB, QD8, MiB/s), random 4 KiB read and
# write (QD16, IOPS), 4 KiB random read and write latency (QD1, µs p50/p99).
# Then recovery: DISK_KILLS SIGKILLs of the whole driver domain under a 4 KiB
# random-write load; shadowd restarts and rewires; the frontend's
# shadow/last-recovery (detect, reconnect, replay, total) and shadowd's history
# give p50/p99 per phase. shadowd's restart backoff is 0 here, so that the
# figures are the mechanism's, not the restart policy's (a first failure has no
# backoff either).
set -euo pipefail
: "${BUILD:?}" "${RES:?}" "${TMP:?}" "${XENSIM:?}"
RUNTIME=${DISK_RUNTIME:-2}
ROUNDS=${DISK_ROUNDS:-2}
KILLS=${DISK_KILLS:-20}
D=$TMP/disk
mkdir -p "$D/state" "$D/run"
SHADOWCTL=$BUILD/bin/shadowctl
PLUGIN=$BUILD/lib/nbdkit-understudy-blk-plugin.so
XSDEV=$BUILD/tests/dom0/xsdev
for c in fio nbdkit jq bc; do command -v $c >/dev/null || { echo "disk bench: $c not installed"; exit 1; }; done
fio --enghelp 2>/dev/null | grep -qw nbd || { echo "disk bench: this fio has no nbd engine"; exit 1; }
for f in "$BUILD/bin/shadowd" "$BUILD/bin/understudy-agent" "$BUILD/bin/blkback" "$PLUGIN" "$XSDEV"; do
    [ -e "$f" ] || { echo "disk bench: $f missing"; exit 1; }
done
if ldd "$PLUGIN" | grep -c libasan >/dev/null; then
    echo "disk bench: $PLUGIN is a sanitizer build; benchmark an optimized tree (make O=... all)"
    exit 1
fi

SD_PID="" NBD_PIDS=()
cleanup() {
    local p
    for p in "${NBD_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "$SD_PID" ] && kill "$SD_PID" 2>/dev/null && wait "$SD_PID" 2>/dev/null
    "$XENSIM" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
bail() {
    echo "disk bench: $*" >&2
    tail -n 5 "$D"/*.log >&2 2>/dev/null || true
    exit 1
}
waitfor() { # waitfor SECONDS WHAT CMD...
    local to=$1 what=$2 i
    shift 2
    for ((i = 0; i < to * 20; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done
    bail "timed out waiting for $what"
}

echo "== disk: fio through the shadow blkfront (NBD) over blkback in a driver domain, shadow on/off, vs direct I/O"
"$XENSIM" start
eval "$("$XENSIM" env 0)"
img=$D/disk.img
dd if=/dev/zero of="$img" bs=1M count=256 oflag=direct conv=fsync status=none

cat >"$D/shadowd.conf" <<EOF
state-dir $D/state
run-dir $D/run
xensim-dir $XENSIM_DIR
report-interval 100ms
domain disk {
    driver xensim
    command $BUILD/bin/understudy-agent --handler vbd=$BUILD/bin/blkback --heartbeat-ms 100
    log $D/disk.log
    heartbeat-timeout 1s
    boot-timeout 10s
    backoff-initial 0ms
    backoff-max 0ms
    stable-after 1s
    restart-budget 64
    restart-window 1m
    reconnect-timeout 10s
}
EOF
sdctl() { "$SHADOWCTL" -s "$D/run/shadowd.sock" "$@"; }
"$BUILD/bin/shadowd" -c "$D/shadowd.conf" >"$D/shadowd.log" 2>&1 &
SD_PID=$!
waitfor 10 "shadowd" sdctl status
_up() { [ "$(sdctl status --json | jq -r '.domains[0] | .state + " " + (.heartbeat.seen | tostring)')" = "up true" ]; }
waitfor 20 "the driver domain" _up
drv=$(xenstore-read /local/domain/0/data/understudy/shadowd/disk/domid)
g=$("$XENSIM" create --name bench-guest --log "$D/guest.log" -- sleep 100000)

fe_dir() { echo "/local/domain/$g/device/vbd/$1"; }
fe_key() { xenstore-read "$(fe_dir "$1")/$2" 2>/dev/null || true; }
# The vbd as libxl writes it. One device serves both plugin modes, in turn:
# two devices differ by themselves (the second one's random reads were slower
# by up to 40% with the same mode), which would pass for the shadow's cost.
DEV=51712
be=/local/domain/$drv/backend/vbd/$g/$DEV
"$XSDEV" "$(fe_dir $DEV)" "n$g,r$drv" backend="$be" backend-id="$drv" state=1 \
    virtual-device=$DEV device-type=disk shadow/generation=0 >/dev/null
"$XSDEV" "$be" "n$drv,r$g" frontend="$(fe_dir $DEV)" frontend-id="$g" online=1 removable=0 \
    bootable=1 state=1 dev=xvda type=phy mode=w device-type=disk params="$img" >/dev/null
SOCK=$D/nbd.sock
MODE="" NBD_PID=""
# serve MODE: nbdkit with the plugin in the guest on $SOCK, shadow=MODE (on/off);
# stops the one running in the other mode first (cleanly: the frontend flushes
# and closes; the new one connects to the same backend).
serve() {
    [ "$MODE" = "$1" ] && return 0
    local i
    if [ -n "$NBD_PID" ]; then
        kill -TERM "$NBD_PID"
        for ((i = 0; i < 200; i++)); do kill -0 "$NBD_PID" 2>/dev/null || break; sleep 0.05; done
        kill -0 "$NBD_PID" 2>/dev/null && bail "nbdkit (shadow=$MODE) did not stop"
    fi
    rm -f "$SOCK"
    "$XENSIM" exec "$g" -- nbdkit -f -v -D nbdkit.backend.datapath=0 -U "$SOCK" "$PLUGIN" \
        "device=device/vbd/$DEV" "shadow=$1" >"$D/nbdkit-$1.log" 2>&1 &
    NBD_PID=$!
    NBD_PIDS+=($!)
    disown $! # its death at xensim stop is not news
    MODE=$1
    waitfor 30 "the NBD export (shadow=$1)" test -S "$SOCK"
    waitfor 30 "the frontend (shadow=$1) to connect" grep -q 'connected to backend' "$D/nbdkit-$1.log"
}

# fio_run CONFIG JOB ROUND: one job; its JSON in $D/CONFIG-JOB-ROUND.json.
fio_run() {
    local cfg=$1 job=$2 round=$3 target=()
    case $cfg in
    shadow) serve on && target=(--ioengine=nbd "--uri=nbd+unix:///?socket=$SOCK") ;;
    shadow-off) serve off && target=(--ioengine=nbd "--uri=nbd+unix:///?socket=$SOCK") ;;
    direct-io) target=(--ioengine=libaio --direct=1 "--filename=$img") ;;
    esac
    local args=()
    case $job in
    seqread) args=(--rw=read --bs=1M --iodepth=8) ;;
    seqwrite) args=(--rw=write --bs=1M --iodepth=8) ;;
    randread4k) args=(--rw=randread --bs=4k --iodepth=16) ;;
    randwrite4k) args=(--rw=randwrite --bs=4k --iodepth=16) ;;
    readlat4k) args=(--rw=randread --bs=4k --iodepth=1) ;;
    writelat4k) args=(--rw=randwrite --bs=4k --iodepth=1) ;;
    esac
    fio --name="$job" "${target[@]}" "${args[@]}" --size=256M --runtime="$RUNTIME" --time_based \
        --ramp_time=1 --randrepeat=0 --lat_percentiles=1 --output-format=json --output="$D/$cfg-$job-$round.json" \
        >>"$D/fio.log" 2>&1 || bail "fio $cfg $job failed: $(tail -3 "$D/fio.log")"
}
# fig CONFIG JOB WHAT [ROUND]: a figure from that job's JSON (default: the best round).
fig() {
    local f=$D/$1-$2-${4:-best}.json dir=read
    case $2 in *write*) dir="write" ;; esac
    case $3 in
    mibs) jq ".jobs[0].$dir.bw_bytes / 1048576" "$f" ;;
    iops) jq ".jobs[0].$dir.iops" "$f" ;;
    # total latency (submission + completion): libaio on ext4 may do the I/O in io_submit
    p50) jq ".jobs[0].$dir.lat_ns.percentile[\"50.000000\"] / 1000" "$f" ;;
    p99) jq ".jobs[0].$dir.lat_ns.percentile[\"99.000000\"] / 1000" "$f" ;;
    esac
}

serve off
grep -q 'retention off: shadow=off' "$D/nbdkit-off.log" || bail "shadow=off is not in effect"
serve on
grep -q 'write cache (flushes, retention)' "$D/nbdkit-on.log" || bail "the shadow retains no writes"
# Rounds interleave the configurations, each round in a rotated order, and each
# figure is its best round's, so that load from outside (a shared machine)
# hurts no configuration more than another.
JOBS=(seqwrite seqread randwrite4k randread4k writelat4k readlat4k)
CFGS=(shadow shadow-off direct-io)
for ((r = 1; r <= ROUNDS; r++)); do
    echo "   round $r of $ROUNDS: ${JOBS[*]} x ${CFGS[*]} (${RUNTIME}s each)"
    for job in "${JOBS[@]}"; do
        # each round starts with another configuration
        for ((i = 0; i < ${#CFGS[@]}; i++)); do
            fio_run "${CFGS[$(((i + r - 1) % ${#CFGS[@]}))]}" "$job" "$r"
        done
    done
done
for job in "${JOBS[@]}"; do
    case $job in seq*) w=mibs sign=1 ;; rand*) w=iops sign=1 ;; *) w=p50 sign=-1 ;; esac
    for cfg in "${CFGS[@]}"; do
        best=1
        for ((r = 2; r <= ROUNDS; r++)); do
            [ "$(echo "$sign * $(fig "$cfg" "$job" $w $r) > $sign * $(fig "$cfg" "$job" $w $best)" | bc -l)" = 1 ] &&
                best=$r
        done
        cp "$D/$cfg-$job-$best.json" "$D/$cfg-$job-best.json"
    done
done
serve on

# One JSON line per (job, baseline).
emit() { # emit BENCH METRIC VALUE BASELINE BASELINE_VALUE [P50 P99]
    local extra=""
    [ $# -ge 7 ] && extra=",\"p50\":$6,\"p99\":$7"
    jq -cn --arg b "$1" --arg m "$2" --argjson v "$3" --arg bl "$4" --argjson bv "$5" \
        "{bench:\$b, metric:\$m, value:(\$v*100|round/100), baseline:\$bl,
          baseline_value:(\$bv*100|round/100), ratio:(if \$bv > 0 then (\$v/\$bv*1000|round/1000) else null end)$extra}" >>"$RES"
}
for job in "${JOBS[@]}"; do
    case $job in
    seq*) m=MiB/s w=mibs ;;
    rand*) m=IOPS w=iops ;;
    *) m=us w=p50 ;;
    esac
    on=$(fig shadow "$job" $w)
    for base in shadow-off direct-io; do
        if [ $w = p50 ]; then
            emit "disk.$job" "$m" "$on" "$base" "$(fig "$base" "$job" p50)" \
                "$on" "$(fig shadow "$job" p99)"
        else
            emit "disk.$job" "$m" "$on" "$base" "$(fig "$base" "$job" $w)"
        fi
    done
done

echo "   recovery: $KILLS SIGKILLs of the driver domain under 4 KiB random writes (QD4)"
fio --name=recovery --ioengine=nbd "--uri=nbd+unix:///?socket=$SOCK" --rw=randwrite \
    --bs=4k --iodepth=4 --size=256M --runtime=600 --time_based --output-format=json \
    --output="$D/recovery.json" >>"$D/fio.log" 2>&1 &
fio_pid=$!
_live_n() { [ "$(fe_key $DEV shadow/state)" = live ] && [ "$(fe_key $DEV shadow/recoveries)" -ge "$1" ]; }
_hist_n() { [ "$(sdctl history --json | jq length)" -ge "$1" ]; }
h0=$(sdctl history --json | jq length)
: >"$D/recoveries"
sleep 1
for ((k = 1; k <= KILLS; k++)); do
    kill -0 "$fio_pid" 2>/dev/null || bail "fio stopped during the recovery runs"
    before=$(fe_key $DEV shadow/recoveries)
    d=$(xenstore-read /local/domain/0/data/understudy/shadowd/disk/domid)
    pgid=$("$XENSIM" info "$d" | sed -n 's/^pid=//p')
    [ -n "$pgid" ] || bail "no process for driver domain $d"
    kill -KILL -- "-$pgid"
    waitfor 30 "recovery $k" _live_n $((before + 1))
    waitfor 10 "shadowd's history of recovery $k" _hist_n $((h0 + k))
    echo "$(fe_key $DEV shadow/last-recovery) sd_total=$(sdctl history --json | jq '.[-1].total_ms')" \
        >>"$D/recoveries"
    # a random point in the next 0.3-0.8 s of I/O
    sleep "0.$((3 + RANDOM % 6))"
done
kill -INT "$fio_pid" 2>/dev/null || true
wait "$fio_pid" || true
# (fio's JSON follows its "terminating on signal" line)
[ "$(sed -n '/^{/,$p' "$D/recovery.json" | jq '.jobs[0].error' 2>/dev/null)" = 0 ] ||
    bail "fio saw an I/O error across the kills: $(tail -3 "$D/fio.log")"
# The frontend's log line per recovery that replayed something (-v): when the first
# replayed request completed, counted from the backend's last sign of life.
grep -o 'first-replayed=[0-9]* ms after the last sign of life; replayed=[0-9]*' \
    "$D/nbdkit-on.log" | sed 's/ ms after the last sign of life;//' >"$D/first-replayed"
# pct FIELD P [FILE]: the P-th percentile (nearest rank) of FIELD over the kills.
pct() {
    sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" "${3:-$D/recoveries}" | sort -n |
        awk -v p="$2" '{v[NR] = $1} END {r = int((NR * p + 99) / 100); if (r < 1) r = 1; print v[r]}'
}
nfirst=$(wc -l <"$D/first-replayed")
[ "$nfirst" -ge 1 ] || bail "no recovery replayed anything (no first-replayed lines in nbdkit's log)"
jq -cn --argjson p50 "$(pct first-replayed 50 "$D/first-replayed")" \
    --argjson p99 "$(pct first-replayed 99 "$D/first-replayed")" --argjson n "$nfirst" \
    --argjson r "$(pct replayed 50 "$D/first-replayed")" \
    '{bench:"disk.recovery.first-replayed", metric:"ms", value:$p50, p50:$p50, p99:$p99, n:$n,
      replayed_p50:$r}' >>"$RES"
for f in total detect reconnect replay sd_total; do
    name=$f
    [ $f = sd_total ] && name=shadowd-total
    jq -cn --arg b "disk.recovery.$name" --argjson p50 "$(pct $f 50)" --argjson p99 "$(pct $f 99)" \
        --argjson n "$KILLS" '{bench:$b, metric:"ms", value:$p50, p50:$p50, p99:$p99, n:$n}' >>"$RES"
done
echo "   kill -> first replayed request done: p50 $(pct first-replayed 50 "$D/first-replayed") ms, p99 $(pct first-replayed 99 "$D/first-replayed") ms ($nfirst recoveries that replayed; median replay set $(pct replayed 50 "$D/first-replayed") requests)"
echo "   kill -> replay complete: p50 $(pct total 50) ms, p99 $(pct total 99) ms over $KILLS kills; fio errors: 0"
echo
printf '   %-12s %-6s %10s %10s %10s %8s %8s\n' job metric shadow shadow-off direct-io on/off on/direct
for job in "${JOBS[@]}"; do
    case $job in seq*) m=MiB/s w=mibs ;; rand*) m=IOPS w=iops ;; *) m="us p50" w=p50 ;; esac
    on=$(fig shadow "$job" $w) off=$(fig shadow-off "$job" $w) dio=$(fig direct-io "$job" $w)
    printf '   %-12s %-6s %10.1f %10.1f %10.1f %8.3f %8.3f\n' "$job" "$m" "$on" "$off" "$dio" \
        "$(echo "$on / $off" | bc -l)" "$(echo "$on / $dio" | bc -l)"
done
