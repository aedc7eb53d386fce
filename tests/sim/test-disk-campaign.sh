#!/usr/bin/env bash
# The disk fault campaign over the real driver domain: shadowd starts a
# driver domain running understudy-agent with blkback (cache=volatile: what a
# kill throws away is every unflushed acknowledged write), and does all of
# the detection, restart and rewiring - no harness helps. A guest runs nbdkit
# with the (ASan-built) shadow blkfront plugin; ext4 on its export (nbdfuse +
# loop) carries a workload of fsynced files with checksums. At random points,
# FAULTS (default 52) faults of random kinds:
#   crash    xensim crash of the domain (a kernel panic)
#   kill     SIGKILL to every process of the domain
#   pause    the domain paused: shadowd sees the heartbeat stop
#   hang     blkback stops serving (shadowctl inject backend-hang): the
#            frontend's deadline passes, it reports, shadowd restarts
#   corrupt  blkback answers with a corrupt response (shadowctl inject
#            corrupt): the frontend reports bad-response, shadowd restarts
# Each must end with a new domain, the device rewired and the frontend live.
# Then: the workload saw no error, fsck is clean through NBD and on the
# backing file, every file holds its last fsynced contents, shadowctl check
# is clean, every recovery in shadowd's history succeeded. Prints faults by
# kind and recovery times (p50/p99). SEED=N reproduces the sequence.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../dom0/dom0-functions.sh"
source "$(dirname "$0")/../frontends/rewire-functions.sh"
source "$(dirname "$0")/disk-functions.sh"
private_mounts "$@"
FAULTS=${FAULTS:-52}
SEED=${SEED:-$((RANDOM * 32768 + RANDOM))}
log "campaign seed $SEED, $FAULTS faults"

disk_setup volatile deadline-ms=1000

workload_start 280 "$((SEED % 32768))"
RANDOM=$SEED
kinds=(crash kill kill pause hang corrupt corrupt)
declare -A by_kind=()
t0=$(date +%s)
for ((f = 1; f <= FAULTS; f++)); do
    ms=$((100 + RANDOM % 1400)) # a random point in what the workload is doing
    sleep "$((ms / 1000)).$(printf %03d $((ms % 1000)))"
    workload_running || fail "the workload ended early: $(tail -2 "$TEST_TMP/workload.out")"
    k=${kinds[$((RANDOM % ${#kinds[@]}))]}
    sd_fault "$k"
    by_kind[$k]=$((${by_kind[$k]:-0} + 1))
    [ $(($(date +%s) - t0)) -lt 250 ] || fail "campaign too slow: $f faults in $(($(date +%s) - t0)) s"
done
elapsed=$(($(date +%s) - t0))
workload_stop
workload_done
expect_check_clean
disk_finish

h=$(sdctl history --json)
n=$(echo "$h" | jq length)
[ "$n" -ge "$FAULTS" ] || fail "shadowd recorded $n recoveries for $FAULTS faults"
bad=$(echo "$h" | jq -c '[.[] | select(.ok | not)]')
[ "$bad" = "[]" ] || fail "recoveries that did not succeed: $bad"
# p50/p99 (nearest rank) of a list of numbers on stdin
pcts() { sort -n | awk '{v[NR] = $1} END {printf "p50=%s p99=%s max=%s", v[int((NR + 1) / 2)], v[int((NR * 99 + 99) / 100)], v[NR]}'; }
summary=""
for k in "${!by_kind[@]}"; do summary+="$k=${by_kind[$k]} "; done
log "faults: $FAULTS in ${elapsed}s ($summary); shadowd recoveries: $n; frontend recoveries: $(fe_key "$guest" "$DEV" shadow/recoveries)"
log "shadowd recovery total ms: $(echo "$h" | jq '.[].total_ms' | pcts)"
log "causes: $(echo "$h" | jq -r '[.[].reason | if test("reports ") then "report " + (try capture("reports (?<k>[a-z-]+)").k catch "?")
    elif test("heartbeat") then "heartbeat lost" elif test("shut down") then "died (" + (try capture("reason (?<r>[a-z]+)").r catch "?") + ")"
    else . end] | group_by(.) | map("\(.[0]) x\(length)") | join(", ")')"
exit 0
