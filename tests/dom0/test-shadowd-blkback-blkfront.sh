#!/usr/bin/env bash
# The disk class end to end with shadowd doing all detection, restart and
# rewiring (no test harness doing any of it): blkback under the agent in a
# driver domain started by shadowd, the shadow blkfront library in a guest
# under a verifying workload. Faults: the domain crashes, is destroyed,
# hangs (paused: heartbeat loss), and the backend answers with corrupt
# responses (the frontend reports; the domain serves only this guest). The
# workload sees no error and every acknowledged write is on the disk.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
BLKBACK=$BUILD/bin/blkback
DRIVER=$TPROG/frontends/blkfe-driver
[ -x "$BLKBACK" ] || skip "blkback not built"
[ -x "$DRIVER" ] || skip "the shadow blkfront's test driver (tests/frontends) not built"
DEV=51712
start_sim
sd_conf
sd_domain drv "command $AGENT --handler vbd=$BLKBACK --heartbeat-ms 100"
sd_start
d=$(sd_wait_up drv)
img=$TEST_TMP/disk.img
truncate -s 64M "$img"
g=$(new_dom guest sh -c 'while [ ! -e "$1" ]; do sleep 0.02; done; shift; exec "$@"' \
    sh "$TEST_TMP/go" "$DRIVER" --device "device/vbd/$DEV" --backing "$img" --seconds 25 \
    --threads 3 --region-mib 16 --deadline-ms 1500 --seed 5 --min-recoveries 4)
dev_add "$g" "$d" "$DEV" params="$img"
touch "$TEST_TMP/go"
wait_for 30 grep -q DRIVER-START "$TEST_TMP/guest.log"
wait_for 10 sd_recorded_is drv 1

progress() { grep -c DRIVER-PROGRESS "$TEST_TMP/guest.log"; }
_progress_gt() { [ "$(progress)" -gt "$1" ]; }
_recovered_n() {
    [ "$(fe_key "$g" "$DEV" shadow/state)" = live ] &&
        [ "$(fe_key "$g" "$DEV" shadow/recoveries 2>/dev/null || echo 0)" -ge "$1" ] 2>/dev/null
}
n=0
for fault in crash destroy hang corrupt; do
    wait_for 20 _progress_gt "$(progress)"
    d=$(sd_domid drv)
    case $fault in
    crash) "$XENSIM" crash "$d" ;;
    destroy) "$XENSIM" destroy "$d" ;;
    hang) sdctl inject drv hang >/dev/null ;;
    corrupt) sdctl inject drv corrupt 1 >/dev/null ;;
    esac
    n=$((n + 1))
    wait_for 30 _recovered_n "$n"
    wait_for 10 sd_state_is drv up
    [ "$(sd_domid drv)" != "$d" ] || fail "$fault: no new driver domain"
    expect_check_clean
    log "$fault: $(sdctl history --json | jq -c '.[-1] | {detect_ms, restart_ms, rewire_ms, reconnect_ms, total_ms}'); frontend: $(fe_key "$g" "$DEV" shadow/last-recovery)"
done
"$XENSIM" wait guest --until shutdown --timeout 120 >/dev/null ||
    fail "the workload did not finish: $(tail -3 "$TEST_TMP/guest.log")"
grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$TEST_TMP"/*.log &&
    fail "sanitizer report: $(grep -l -E 'Sanitizer|runtime error' "$TEST_TMP"/*.log)"
grep -q '^DRIVER-OK' "$TEST_TMP/guest.log" ||
    fail "workload: $(grep -m1 -E 'DRIVER-FAIL|ERROR' "$TEST_TMP/guest.log" || tail -3 "$TEST_TMP/guest.log")"
log "$(grep '^DRIVER-OK' "$TEST_TMP/guest.log")"
h=$(sdctl history --json)
expect_eq "recoveries by shadowd" "$(echo "$h" | jq length)" 4
expect_eq "all complete" "$(echo "$h" | jq '[.[] | select(.ok and .reconnected == 1)] | length')" 4
sd_log_has "its only guest, reports bad-response" || fail "the corrupt response was not acted on by report"
exit 0
