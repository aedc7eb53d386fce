#!/usr/bin/env bash
# A driver domain serving two guests is not restarted on one guest's word:
# a lone report waits for corroboration. Reports from both guests within
# corroboration-window restart it, and so does death; every device of both
# guests is rewired and reconnects each time.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf "corroboration-window 3s"
sd_domain drv
sd_start
d1=$(sd_wait_up drv)
a=$(new_dom guest-a)
b=$(new_dom guest-b)
dev_add "$a" "$d1" 51712
dev_add "$a" "$d1" 51728
dev_add "$b" "$d1" 51712
fe_start "$a" 51712
fe_start "$a" 51728
fe_start "$b" 51712
for x in "$a 51712" "$a 51728" "$b 51712"; do wait_recovered $x 0; done
wait_for 10 sd_recorded_is drv 3
expect_eq "guests" "$(sd_q drv .guests)" 2

# Guest a alone: no restart, even when it insists.
as_dom "$a" xenstore-write "$(fe_dir "$a" 51712)/shadow/report" "1 timeout lone complaint"
wait_for 5 sd_log_has "guest $a reports timeout .* waits for corroboration"
as_dom "$a" xenstore-write "$(fe_dir "$a" 51728)/shadow/report" "1 bad-response same guest"
sleep 1.5
expect_eq "domain after one guest's reports" "$(sd_domid drv)" "$d1"
# Death needs no corroboration.
"$XENSIM" crash "$d1"
for x in "$a 51712" "$a 51728" "$b 51712"; do wait_recovered $x 1; done
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "not restarted after death"
expect_eq "devices back" "$(sdctl history --json | jq -r '.[-1] | "\(.reconnected)/\(.devices)"')" 3/3
expect_check_clean

# Both guests report within the window: corroborated.
as_dom "$a" xenstore-write "$(fe_dir "$a" 51712)/shadow/report" "2 timeout first"
sleep 0.3
as_dom "$b" xenstore-write "$(fe_dir "$b" 51712)/shadow/report" "1 timeout second"
for x in "$a 51712" "$a 51728" "$b 51712"; do wait_recovered $x 2; done
d3=$(sd_domid drv)
[ "$d3" != "$d2" ] || fail "not restarted after corroborated reports"
sd_log_has "corroborated reports from guests" || fail "corroboration not logged"
expect_check_clean
exit 0
