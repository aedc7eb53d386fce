#!/usr/bin/env bash
# The fault campaign: at least 50 faults of random kinds (driver domain
# destroyed, backend process killed, domain crashed, paused past the
# deadline, answering garbage) at random points, while a workload of
# fsynced files runs on ext4 over NBD over the (ASan-built) plugin, over a
# backend with a volatile write cache; after each, the harness rewires a new
# driver domain. The workload sees no error; fsck is clean through NBD and on
# the backing file; every file holds its last fsynced contents. Prints the
# faults by kind and recovery times (p50, p99, max). SEED=N reproduces the
# fault sequence; FAULTS=N changes the count.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
private_mounts "$@"
FAULTS=${FAULTS:-55}
SEED=${SEED:-$((RANDOM * 32768 + RANDOM))}
log "campaign seed $SEED, $FAULTS faults"
nbd_setup 256 deadline-ms=1000 -- cache=volatile
workload_start 250 "$((SEED % 32768))"
RANDOM=$SEED
kinds=(destroy destroy kill kill crash pause corrupt corrupt)
declare -A by_kind=()
times=()
t0=$(date +%s)
for ((f = 1; f <= FAULTS; f++)); do
    # a random point: 0.1 to 1.5 s into whatever the workload is doing
    ms=$((100 + RANDOM % 1400))
    sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
    workload_running || fail "the workload ended early: $(tail -2 "$TEST_TMP/workload.out")"
    k=${kinds[$((RANDOM % ${#kinds[@]}))]}
    fault "$k" >/dev/null
    by_kind[$k]=$((${by_kind[$k]:-0} + 1))
    times+=("$(last_recovery_ms)")
    [ $(($(date +%s) - t0)) -lt 230 ] || fail "campaign too slow: $f faults in $(($(date +%s) - t0)) s"
done
workload_stop
workload_done
nbd_finish
# One recovery a fault, one more for each corrupt answer caught; under a
# loaded machine a request can pass its 1 s deadline with no fault at all:
# such extra recoveries must each be a timeout that no pause explains.
want=$(($(grep -c 'failed: bad-response' "$TEST_TMP/guest.log") + FAULTS))
got=$(fe_key "$guest" "$DEV" shadow/recoveries)
spare=$(($(grep -c 'failed: timeout' "$TEST_TMP/guest.log") - ${by_kind[pause]:-0}))
[ "$got" -ge "$want" ] && [ $((got - want)) -le "$spare" ] ||
    fail "recoveries: $got, want $want (and at most $spare more, from deadline timeouts)"
[ "$got" = "$want" ] || log "$((got - want)) recoveries more than faults: deadline timeouts on a loaded machine"
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
n=${#times[@]}
p50=$(echo "$sorted" | sed -n "$(((n + 1) / 2))p")
p99=$(echo "$sorted" | sed -n "$(((n * 99 + 99) / 100))p")
summary=""
for k in "${!by_kind[@]}"; do summary+="$k=${by_kind[$k]} "; done
log "faults: $n ($summary); recovery total ms: p50=$p50 p99=$p99 max=$(echo "$sorted" | tail -1)"
[ "$n" -ge 50 ] || fail "only $n faults"
exit 0
