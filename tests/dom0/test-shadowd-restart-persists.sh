#!/usr/bin/env bash
# What shadowd knows survives shadowd: restarted while all is well it adopts
# the running domain (no restart); and if the driver domain dies while
# shadowd is down - its backend dirs die with it - the restarted shadowd
# rebuilds them from the records in its state dir.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf
sd_domain drv
sd_start
d1=$(sd_wait_up drv)
g=$(new_dom guest)
dev_add "$g" "$d1" 51712 cache=volatile
fe_start "$g" 51712 --deadline-ms 60000
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1

sd_stop
sd_start
wait_for 5 sd_log_has "adopted running domain $d1 \(1 recorded devices\)"
expect_eq "domid after a shadowd restart" "$(sd_domid drv)" "$d1"
expect_eq "restarts" "$(sd_q drv .restarts)" 0

sd_kill9
"$XENSIM" crash "$d1"
"$XENSIM" destroy "$d1"
xenstore-read "$(be_dir "$d1" "$g" 51712)/params" 2>/dev/null && fail "backend dir outlived its domain"
sd_start
wait_recovered "$g" 51712 1
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new domain"
sd_log_has "detect: domain $d1 is gone \(found at shadowd start\)" || fail "reason"
expect_eq "params rebuilt" "$(xenstore-read "$(be_dir "$d2" "$g" 51712)/params")" \
    "$TEST_TMP/disk-$g-51712.img"
expect_eq "cache rebuilt" "$(xenstore-read "$(be_dir "$d2" "$g" 51712)/cache")" volatile
expect_check_clean
exit 0
