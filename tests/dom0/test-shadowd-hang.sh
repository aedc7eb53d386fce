#!/usr/bin/env bash
# A driver domain that hangs (paused: its agent's heartbeat stops changing)
# is detected after heartbeat-timeout, destroyed while still paused, and
# replaced; detect is about the timeout, not sooner.
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

# A heartbeat that stops changing is loss, whatever its value.
sdctl inject drv hang >/dev/null || fail "shadowctl inject drv hang"
expect_eq "state after pause" "$("$XENSIM" info "$d1" | sed -n 's/^state=//p')" paused
wait_recovered "$g" 51712 1
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new driver domain"
"$XENSIM" info "$d1" >/dev/null 2>&1 && fail "the hung domain $d1 was not destroyed"
sd_log_has "detect: domain $d1: heartbeat lost" || fail "heartbeat loss not logged"
det=$(sdctl history --json | jq '.[0].detect_ms')
[ "$det" -ge 900 ] && [ "$det" -le 3000 ] || fail "detect took $det ms, want about heartbeat-timeout (1 s)"
expect_eq "detected by" "$(sdctl metrics | sed -n 's/^shadowd_detections_total{domain="drv",source="heartbeat"} //p')" 1
expect_check_clean
exit 0
