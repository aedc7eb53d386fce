#!/usr/bin/env bash
# blk-grant-figures.sh [RUNTIME] [GRANTS...] - not a test (run-tests runs test-*.sh): what the
# shadow blkfront's grant budget per connection (the plugin's max-grants: ring + data pages)
# does to throughput, for the README's choice of the default. fio (engine nbd) against the
# plugin's NBD export, nbdkit in a guest domain, over blkback (cache=none: O_DIRECT on the
# backing file) in a driver domain of the stand-in toolstack; for each GRANTS value (default
# 512 216 124 64) nbdkit is restarted with max-grants=GRANTS and runs the jobs of
# bench/parts/disk.sh: sequential read and write (1 MiB, QD8), random 4 KiB read and write
# (QD16), RUNTIME s each (default 5), in three rounds with the values in turn (the best
# round's figure: load from outside hurts no value more than another). Prints
# "GRANTS <n> <job> <MiB/s or IOPS>" lines.
# Run it as the tests run, on an optimized build:
#   BUILD=build/rel TEST_TMP=$(mktemp -d) tests/frontends/blk-grant-figures.sh 5
RUNTIME=${1:-5}
shift
GRANTS=("$@")
[ ${#GRANTS[@]} -gt 0 ] || GRANTS=(512 216 124 64)
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
requires fio nbdkit jq
fio --enghelp 2>/dev/null | grep -qw nbd || fail "this fio has no nbd engine"
[ -x "$BUILD/bin/blkback" ] || fail "blkback not built in $BUILD"
ldd "$PLUGIN" | grep -q libasan && fail "$PLUGIN is a sanitizer build: use an optimized tree"
export BLK_BACKEND=$BUILD/bin/blkback
start_sim
img=$TEST_TMP/disk.img
dd if=/dev/zero of="$img" bs=1M count=256 oflag=direct conv=fsync status=none
guest=$(new_dom guest)
drv=$(backend_dom drv0 "$guest" "$DEV" "$img")
frontend_add "$guest" "$DEV" "$drv"
SOCK=$TEST_TMP/nbd.sock NBD_PID=""
_stop_nbd() {
    [ -n "$NBD_PID" ] || return 0
    kill -TERM "$NBD_PID" 2>/dev/null
    local i
    for ((i = 0; i < 200; i++)); do kill -0 "$NBD_PID" 2>/dev/null || break; sleep 0.05; done
    NBD_PID=""
}
on_exit _stop_nbd
serve() { # serve GRANTS
    _stop_nbd
    rm -f "$SOCK"
    "$XENSIM" exec "$guest" -- nbdkit -f -v -D nbdkit.backend.datapath=0 -U "$SOCK" "$PLUGIN" \
        "device=device/vbd/$DEV" "max-grants=$1" >"$TEST_TMP/nbdkit-$1.log" 2>&1 &
    NBD_PID=$!
    wait_for 30 test -S "$SOCK"
    wait_for 30 grep -q 'connected to backend' "$TEST_TMP/nbdkit-$1.log"
}
JOBS=(seqread seqwrite randread4k randwrite4k)
run_job() { # run_job GRANTS JOB ROUND
    local args=()
    case $2 in
    seqread) args=(--rw=read --bs=1M --iodepth=8) ;;
    seqwrite) args=(--rw=write --bs=1M --iodepth=8) ;;
    randread4k) args=(--rw=randread --bs=4k --iodepth=16) ;;
    randwrite4k) args=(--rw=randwrite --bs=4k --iodepth=16) ;;
    esac
    fio --name="$2" --ioengine=nbd "--uri=nbd+unix:///?socket=$SOCK" "${args[@]}" --size=256M \
        --runtime="$RUNTIME" --time_based --ramp_time=1 --randrepeat=0 --output-format=json \
        --output="$TEST_TMP/$1-$2-$3.json" >>"$TEST_TMP/fio.log" 2>&1 || fail "fio $1 $2"
}
figure() { # figure GRANTS JOB ROUND: MiB/s (sequential) or IOPS
    local f=$TEST_TMP/$1-$2-$3.json dir=read
    case $2 in *write*) dir=write ;; esac
    case $2 in
    seq*) jq ".jobs[0].$dir.bw_bytes / 1048576 | floor" "$f" ;;
    *) jq ".jobs[0].$dir.iops | floor" "$f" ;;
    esac
}
for round in 1 2 3; do
    for g in "${GRANTS[@]}"; do
        serve "$g"
        for job in "${JOBS[@]}"; do run_job "$g" "$job" "$round"; done
    done
done
_stop_nbd
for g in "${GRANTS[@]}"; do
    for job in "${JOBS[@]}"; do
        a=$(figure "$g" "$job" 1) b=$(figure "$g" "$job" 2) c=$(figure "$g" "$job" 3)
        best=$((a > b ? a : b))
        echo "GRANTS $g $job $((best > c ? best : c)) (rounds: $a, $b, $c)"
    done
done
