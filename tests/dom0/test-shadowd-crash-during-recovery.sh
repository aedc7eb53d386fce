#!/usr/bin/env bash
# The new driver domain crashes while shadowd waits for the frontends to
# reconnect: the failure folds into the recovery in progress (one more
# restart after the backoff), and the frontend, held back meanwhile, ends up
# on the third domain. One recovery in history, two restarts in it.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf
sd_domain drv
sd_start
d1=$(sd_wait_up drv)
g=$(new_dom guest)
dev_add "$g" "$d1" 51712
fe_start "$g" 51712 --deadline-ms 30000
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1

fe_freeze "$g" 51712 # the frontend cannot reconnect yet
"$XENSIM" crash "$d1"
wait_for 10 sd_phase_is drv reconnect
d2=$(sd_q drv .recovery.new_domid)
"$XENSIM" crash "$d2"
wait_for 10 sd_log_has "new domain $d2 failed during reconnect"
wait_for 10 sd_attempts_is drv 2
fe_thaw "$g" 51712
wait_recovered "$g" 51712 1
d3=$(sd_domid drv)
[ "$d3" != "$d1" ] && [ "$d3" != "$d2" ] || fail "want a third domain, have $d3"
expect_eq "FE/backend-id" "$(fe_key "$g" 51712 backend-id)" "$d3"
h=$(sdctl history --json)
expect_eq "recoveries in history" "$(echo "$h" | jq length)" 1
expect_eq "restarts in the recovery" "$(echo "$h" | jq '.[0].attempts')" 2
expect_eq "ok" "$(echo "$h" | jq -r '.[0].ok')" true
echo "$h" | jq -r '.[0].reason' | grep -q "; then domain $d2" || fail "reason: $(echo "$h" | jq -r '.[0].reason')"
expect_check_clean
exit 0
