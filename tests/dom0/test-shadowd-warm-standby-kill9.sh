#!/usr/bin/env bash
# kill -9 of shadowd in the middle of a failover to the standby (promoted,
# the frontend switched to its hot connection but not back yet): restarted
# by its unit, shadowd resumes the recovery on the promoted domain (no
# second domain is created) and sees the frontend back in its slot, then
# boots a fresh standby under the freed name and connects the frontend to it
# in the other slot. The state dir says which of the two names serves.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf
sd_domain drv "standby on"
sd_supervise
d1=$(sd_wait_up drv)
_sb_ready() { [ "$(sd_q drv .standby.state)" = ready ]; }
wait_for 15 _sb_ready
s1=$(sd_q drv .standby.domid)
g=$(new_dom guest)
dev_add "$g" "$d1" 51712
fe_start "$g" 51712 --deadline-ms 60000
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1
fe=$(fe_dir "$g" 51712)
_slot_up() { [ "$(xenstore-read "$fe/shadow/standby" 2>/dev/null)" = "$1" ] &&
    [ "$(xenstore-read "$fe/shadow/$1/state" 2>/dev/null)" = 4 ]; }
wait_for 15 _slot_up slot-a

fe_freeze "$g" 51712
"$XENSIM" crash "$d1"
wait_for 10 sd_phase_is drv reconnect
expect_eq "the promoted standby serves" "$(sd_q drv '.recovery.new_domid')" "$s1"
grep -qx "slot 1" "$TEST_TMP/state/drv.devices" || fail "slot not saved: $(cat "$TEST_TMP/state/drv.devices")"
sd_kill9
sd_wait_restarted
expect_eq "resumed phase" "$(sd_q drv '.recovery.phase // ""')" reconnect
fe_thaw "$g" 51712
wait_recovered "$g" 51712 1
wait_for 10 sd_state_is drv up
expect_eq "serving" "$(sd_domid drv)" "$s1"
expect_eq "history" "$(sdctl history --json | jq -r '.[-1] | "\(.ok) \(.warm) \(.old_domid)->\(.new_domid) \(.attempts) \(.hot_devices)"')" \
    "true true $d1->$s1 1 1"
expect_eq "live in the slot" "$(xenstore-read "$(be_dir "$s1" "$g" 51712)/frontend")" "$fe/shadow/slot-a"
"$XENSIM" info "$d1" >/dev/null 2>&1 && fail "the failed domain $d1 was not destroyed"
expect_check_clean
_sb_fresh() { _sb_ready && [ "$(sd_q drv .standby.domid)" != "$s1" ]; }
wait_for 15 _sb_fresh
expect_eq "fresh standby's name" "$(sd_q drv .standby.name)" drv
expect_eq "serving domain's name" "$(sd_q drv .domain_name)" drv.2
wait_for 15 _slot_up slot-b
_check_clean() { sdctl check >/dev/null 2>&1; }
wait_for 10 _check_clean
expect_check_clean
exit 0
