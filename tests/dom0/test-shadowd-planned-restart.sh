#!/usr/bin/env bash
# shadowctl restart: a planned restart of a healthy driver domain - a new
# domain, every device rewired, the frontends reconnect; a second request
# while one is running is refused.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf
sd_domain drv "restart-delay 5s"
sd_start
d1=$(sd_wait_up drv)
g=$(new_dom guest)
dev_add "$g" "$d1" 51712
dev_add "$g" "$d1" 51728
fe_start "$g" 51712
fe_start "$g" 51728
wait_recovered "$g" 51712 0
wait_recovered "$g" 51728 0
wait_for 10 sd_recorded_is drv 2

fe_freeze "$g" 51728 # holds the recovery in its reconnect phase
sdctl restart drv | grep -q "restarting drv" || fail "shadowctl restart"
out=$(sdctl restart drv 2>&1) && fail "a second restart was accepted"
echo "$out" | grep -q "already recovering" || fail "message: $out"
fe_thaw "$g" 51728
wait_recovered "$g" 51712 1
wait_recovered "$g" 51728 1
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new domain"
h=$(sdctl history --json)
expect_eq "kind" "$(echo "$h" | jq -r '.[0].kind')" planned
r=$(echo "$h" | jq '.[0].restart_ms')
[ "$r" -lt 5000 ] || fail "a planned restart waited restart-delay ($r ms)"
expect_eq "planned detections" "$(sd_detections planned)" 1
expect_check_clean
exit 0
