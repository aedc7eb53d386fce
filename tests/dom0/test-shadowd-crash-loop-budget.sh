#!/usr/bin/env bash
# A driver domain that keeps crashing is restarted with growing backoff until
# its restart budget is spent; then it is left down and that is said loudly:
# log, status (state failed, with the reason), xenstore status keys, metrics,
# history. shadowctl restart brings it back once the operator has looked.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf
sd_domain drv "restart-budget 2" "restart-window 1m" "backoff-initial 300ms"
sd_start
d=$(sd_wait_up drv)
g=$(new_dom guest)
dev_add "$g" "$d" 51712
fe_start "$g" 51712 --deadline-ms 60000
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1

for i in 1 2; do
    "$XENSIM" crash "$d"
    wait_recovered "$g" 51712 $i
    n=$(sd_domid drv)
    [ "$n" != "$d" ] || fail "restart $i: no new domain"
    d=$n
    expect_check_clean
done
restart_ms=$(sdctl history --json | jq '.[1].restart_ms')
[ "$restart_ms" -ge 300 ] || fail "the second restart waited $restart_ms ms, want the backoff (300 ms)"
"$XENSIM" crash "$d"
wait_for 10 sd_state_is drv failed
sleep 0.5
expect_eq "left down: the crashed domain is still there" \
    "$("$XENSIM" info "$d" | sed -n 's/^state=//p')" shutdown
expect_eq "no new domain" "$("$XENSIM" list | grep -c ' drv ')" 1
sd_log_has "GIVING UP: restart budget exhausted: 2 restarts within 1m" || fail "not logged loudly"
xenstore-read "$SD_DIR/drv/error" | grep -q "restart budget exhausted" || fail "no error key"
sd_q drv .error | grep -q "restart budget exhausted" || fail "status has no error"
sdctl status | grep -q "FAILED, left down" || fail "status table"
sdctl metrics | grep -qx 'shadowd_recovery_failures_total{domain="drv"} 1' || fail "metrics"
sdctl metrics | grep -qx 'shadowd_domain_state{domain="drv",state="failed"} 1' || fail "metrics state"
expect_eq "last history entry" "$(sdctl history --json | jq -r '.[-1].ok')" false

# The operator brings it back.
sdctl restart drv >/dev/null || fail "shadowctl restart drv"
wait_recovered "$g" 51712 3
wait_for 10 sd_state_is drv up
xenstore-read "$SD_DIR/drv/error" >/dev/null 2>&1 && fail "error key left behind"
expect_check_clean
exit 0
