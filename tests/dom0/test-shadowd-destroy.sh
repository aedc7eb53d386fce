#!/usr/bin/env bash
# A driver domain destroyed outright (gone, no shutdown reason left to read)
# is seen through @releaseDomain, restarted, and its device rewired.
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
fe_start "$g" 51712
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1

"$XENSIM" destroy "$d1"
wait_recovered "$g" 51712 1
d2=$(sd_domid drv)
[ -n "$d2" ] && [ "$d2" != "$d1" ] || fail "no new driver domain"
sd_log_has "recovery [0-9]+: detect: domain $d1 is gone" || fail "detect reason not logged"
expect_eq "FE/backend-id" "$(fe_key "$g" 51712 backend-id)" "$d2"
expect_check_clean
exit 0
