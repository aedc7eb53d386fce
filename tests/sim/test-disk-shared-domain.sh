#!/usr/bin/env bash
# The disk class with shadowd doing all detection, restart and rewiring, one
# driver domain (understudy-agent + blkback, started by shadowd) serving two
# guests, each running the shadow blkfront library (blkfe-driver) on its own
# disk image under a verifying workload. Faults:
#   1. the driver domain crashes: both guests are rewired and reconnect;
#   2. it crashes again, and its replacement crashes as soon as shadowd has
#      created it, before the recovery is over: shadowd folds that into the
#      same recovery (two restarts in one history entry), both guests end up
#      on a third domain. Guest b is paused (xensim pause: a stuck guest) from
#      before the first crash until the replacement has crashed, so that the
#      recovery cannot end first however fast it is; guest a runs on and may
#      or may not have reconnected to the replacement when it crashes.
# After each recovery shadowctl check is clean and both workloads make
# progress again; at the end neither saw an error and every acknowledged
# write is read back and found on its backing file.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../dom0/dom0-functions.sh"
source "$(dirname "$0")/disk-functions.sh"
requires jq xenstore-read xenstore-list
[ -x "$BLKBACK" ] || skip "blkback not built"
DEV=51712
start_sim
sd_conf
sd_domain drv "command $AGENT --handler vbd=$BLKBACK --heartbeat-ms 100" "heartbeat-timeout 1s" \
    "backoff-initial 300ms" "backoff-max 1s" "reconnect-timeout 20s"
sd_start
d=$(sd_wait_up drv)
wl=(--threads 2 --region-mib 16 --deadline-ms 1500 --min-recoveries 2)
a=$(drv_guest guest-a $DEV 25 11 "${wl[@]}")
b=$(drv_guest guest-b $DEV 25 12 "${wl[@]}")
dev_add "$a" "$d" $DEV params="$TEST_TMP/guest-a.img"
dev_add "$b" "$d" $DEV params="$TEST_TMP/guest-b.img"
drv_guest_go guest-a
drv_guest_go guest-b
wait_for 10 sd_recorded_is drv 2
expect_eq "guests of the driver domain" "$(sd_q drv .guests)" 2

recs() { fe_key "$1" $DEV shadow/recoveries; }
_live_ge() { [ "$(fe_key "$1" $DEV shadow/state)" = live ] && [ "$(recs "$1")" -ge "$2" ] 2>/dev/null; }
_both_live() { _live_ge "$a" "$1" && _live_ge "$b" "$2" && _sd_settled; }
_progress_gt() { [ "$(drv_progress "$1")" -gt "$2" ]; }
# Both workloads are doing I/O (a new progress line from each).
both_progress() {
    local pa pb
    pa=$(drv_progress guest-a) pb=$(drv_progress guest-b)
    wait_for 20 _progress_gt guest-a "$pa"
    wait_for 20 _progress_gt guest-b "$pb"
}
# The driver domain's xenstore status key names a domain other than $1.
_replaced() { local n; n=$(sd_domid drv) && [ -n "$n" ] && [ "$n" != "$1" ]; }
# After a recovery: a new domain up, both devices reconnected, check clean.
after_recovery() {
    local what=$1 ra=$2 rb=$3 h
    wait_for 40 _both_live $((ra + 1)) $((rb + 1))
    wait_for 10 sd_state_is drv up
    h=$(sdctl history --json)
    expect_eq "$what: devices reconnected" "$(echo "$h" | jq -r '.[-1] | "\(.ok) \(.reconnected)/\(.devices)"')" "true 2/2"
    expect_check_clean
    both_progress
    log "$what: $(echo "$h" | jq -c '.[-1] | {attempts, detect_ms, restart_ms, rewire_ms, reconnect_ms, total_ms}')"
}

# 1. A crash.
both_progress
ra=$(recs "$a") rb=$(recs "$b")
d1=$(sd_domid drv)
"$XENSIM" crash "$d1" >/dev/null || fail "xensim crash $d1"
after_recovery "crash" "$ra" "$rb"
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "crash: no new driver domain"
expect_eq "recoveries in history" "$(sdctl history --json | jq length)" 1

# 2. A crash, then the replacement crashes before the guests are back.
ra=$(recs "$a") rb=$(recs "$b")
"$XENSIM" pause guest-b || fail "xensim pause guest-b"
"$XENSIM" crash "$d2" >/dev/null || fail "xensim crash $d2"
wait_for 15 _replaced "$d2"
d3=$(sd_domid drv)
"$XENSIM" crash "$d3" >/dev/null || fail "xensim crash $d3 (the replacement)"
wait_for 15 sd_log_has "new domain $d3 failed during"
"$XENSIM" unpause guest-b || fail "xensim unpause guest-b"
after_recovery "crash during recovery" "$ra" "$rb"
d4=$(sd_domid drv)
[ "$d4" != "$d2" ] && [ "$d4" != "$d3" ] || fail "want a third domain, have $d4"
for g in "$a" "$b"; do expect_eq "guest $g: FE/backend-id" "$(fe_key "$g" $DEV backend-id)" "$d4"; done
h=$(sdctl history --json)
expect_eq "recoveries in history" "$(echo "$h" | jq length)" 2
expect_eq "restarts in the second recovery" "$(echo "$h" | jq '.[-1].attempts')" 2
log "$(grep -o "new domain $d3 failed during [a-z]*" "$SD_LOG")"

drv_guest_finish guest-a 60
drv_guest_finish guest-b 60
_sd_sanitizer_check
exit 0
