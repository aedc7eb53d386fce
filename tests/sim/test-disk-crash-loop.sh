#!/usr/bin/env bash
# The disk class in a crash loop: one driver domain (understudy-agent +
# blkback, started by shadowd, restart-budget 2) serving two guests, each
# running the shadow blkfront library (blkfe-driver) under a verifying
# workload. It crashes until the budget is spent: shadowd leaves it down and
# says so (status state failed with the reason, SD/state and SD/error in
# xenstore). Meanwhile both frontends hold their I/O (shadow/state
# recovering, no write completes, no error to the workload, the guests run
# on) for a few seconds; then shadowctl restart brings the domain back, both
# reconnect, and both workloads end with no error and every acknowledged
# write read back and found on its backing file.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../dom0/dom0-functions.sh"
source "$(dirname "$0")/disk-functions.sh"
requires jq xenstore-read xenstore-list
[ -x "$BLKBACK" ] || skip "blkback not built"
DEV=51712
HOLD_S=3 # how long the test watches the frontends hold I/O with the domain down
start_sim
sd_conf
sd_domain drv "command $AGENT --handler vbd=$BLKBACK --heartbeat-ms 100" "heartbeat-timeout 1s" \
    "restart-budget 2" "restart-window 1m" "backoff-initial 200ms" "backoff-max 1s"
sd_start
d=$(sd_wait_up drv)
wl=(--threads 2 --region-mib 16 --deadline-ms 1500 --min-recoveries 3)
a=$(drv_guest guest-a $DEV 20 21 "${wl[@]}")
b=$(drv_guest guest-b $DEV 20 22 "${wl[@]}")
dev_add "$a" "$d" $DEV params="$TEST_TMP/guest-a.img"
dev_add "$b" "$d" $DEV params="$TEST_TMP/guest-b.img"
drv_guest_go guest-a
drv_guest_go guest-b
wait_for 10 sd_recorded_is drv 2

recs() { fe_key "$1" $DEV shadow/recoveries; }
_live_ge() { [ "$(fe_key "$1" $DEV shadow/state)" = live ] && [ "$(recs "$1")" -ge "$2" ] 2>/dev/null; }
_both_live() { _live_ge "$a" "$1" && _live_ge "$b" "$1" && _sd_settled; }
_both_recovering() {
    [ "$(fe_key "$a" $DEV shadow/state)" = recovering ] && [ "$(fe_key "$b" $DEV shadow/state)" = recovering ]
}
_writes_gt() { [ "$(drv_writes "$1")" -gt "$2" ]; }
both_progress() {
    local wa wb
    wa=$(drv_writes guest-a) wb=$(drv_writes guest-b)
    wait_for 20 _writes_gt guest-a "$wa"
    wait_for 20 _writes_gt guest-b "$wb"
}
no_driver_fail() {
    ! grep -h -m1 -E 'DRIVER-FAIL|ERROR' "$TEST_TMP/guest-a.log" "$TEST_TMP/guest-b.log" ||
        fail "a workload saw an error"
}

# Within the budget: restarted each time.
for i in 1 2; do
    both_progress
    "$XENSIM" crash "$d" >/dev/null || fail "xensim crash $d"
    wait_for 30 _both_live "$i"
    wait_for 10 sd_state_is drv up
    n=$(sd_domid drv)
    [ "$n" != "$d" ] || fail "crash $i: no new domain"
    d=$n
    expect_check_clean
done

# The third crash within the window spends the budget: left down.
both_progress
"$XENSIM" crash "$d" >/dev/null || fail "xensim crash $d"
wait_for 10 sd_state_is drv failed
xenstore-read "$SD_DIR/drv/error" | grep -q "restart budget exhausted" ||
    fail "SD/error: '$(xenstore-read "$SD_DIR/drv/error" 2>&1)'"
expect_eq "status state" "$(sd_q drv .state)" failed
sd_q drv .error | grep -q "restart budget exhausted" || fail "status error: '$(sd_q drv .error)'"
sd_log_has "GIVING UP: restart budget exhausted" || fail "not logged loudly"
log "left down: $(sd_q drv .error)"
# The frontends hold their I/O: recovering, nothing completes, no error.
wait_for 10 _both_recovering
sleep 1 # the last progress line before the hold is printed
wa=$(drv_writes guest-a) wb=$(drv_writes guest-b)
for ((t = 0; t < HOLD_S * 10; t++)); do
    _both_recovering || fail "a frontend left recovering while the domain is down: a=$(fe_key "$a" $DEV shadow/state) b=$(fe_key "$b" $DEV shadow/state)"
    no_driver_fail
    sleep 0.1
done
for g in guest-a guest-b; do
    "$XENSIM" info $g | grep -qx 'state=running' || fail "$g: $("$XENSIM" info $g | tr '\n' ' ')"
done
expect_eq "guest-a writes completed while down" "$(drv_writes guest-a)" "$wa"
expect_eq "guest-b writes completed while down" "$(drv_writes guest-b)" "$wb"
expect_eq "still failed" "$(sd_state drv)" failed
expect_eq "no new domain" "$("$XENSIM" list | grep -c ' drv ')" 1

# The operator brings it back.
sdctl restart drv >/dev/null || fail "shadowctl restart drv"
wait_for 30 _both_live 3
wait_for 10 sd_state_is drv up
xenstore-read "$SD_DIR/drv/error" >/dev/null 2>&1 && fail "SD/error left behind"
expect_check_clean
both_progress
h=$(sdctl history --json)
expect_eq "history ok" "$(echo "$h" | jq -c '[.[] | .ok]')" "[true,true,false,true]"
drv_guest_finish guest-a 60
drv_guest_finish guest-b 60
_sd_sanitizer_check
exit 0
