#!/usr/bin/env bash
# kill -9 of shadowd in the middle of a recovery; restarted by its unit, it
# finishes the job from its state dir: once while waiting to restart the
# domain (restart-delay), once while waiting for the frontend to reconnect
# (the frontend is stopped). shadowd runs as configs/systemd/shadowd.service
# says (sd_supervise: its ExecStartPre, ExecStart, Restart= and RestartSec=),
# so a unit that would not restart it fails this test.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf
sd_domain drv "restart-delay 3s"
sd_supervise
d1=$(sd_wait_up drv)
g=$(new_dom guest)
dev_add "$g" "$d1" 51712
fe_start "$g" 51712 --deadline-ms 60000
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1

# 1. In the restart phase.
"$XENSIM" crash "$d1"
wait_for 5 sd_phase_is drv restart
sd_kill9
grep -q "^rec [0-9]* failure restart $d1 0 " "$TEST_TMP/state/drv.recovery" ||
    fail "no recovery on disk: $(cat "$TEST_TMP/state/drv.recovery" 2>&1)"
sd_wait_restarted
sd_log_has "supervisor: shadowd exited with status 137; Restart=always" ||
    fail "not restarted by the unit's rule"
wait_recovered "$g" 51712 1
sd_log_has "resuming recovery [0-9]+ .* at restart" || fail "not resumed"
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new domain"
wait_for 10 sd_state_is drv up # shadowd sees the frontend back a moment after it is
[ -e "$TEST_TMP/state/drv.recovery" ] && fail "recovery file left behind"
expect_eq "history" "$(sdctl history --json | jq -r '.[-1] | "\(.ok) \(.old_domid)->\(.new_domid)"')" \
    "true $d1->$d2"
expect_check_clean

# 2. In the reconnect phase.
fe_freeze "$g" 51712
"$XENSIM" crash "$d2"
wait_for 10 sd_phase_is drv reconnect
sd_kill9
sd_wait_restarted
expect_eq "resumed phase" "$(sd_q drv '.recovery.phase // ""')" reconnect
fe_thaw "$g" 51712
wait_recovered "$g" 51712 2
wait_for 10 sd_state_is drv up
d3=$(sd_domid drv)
[ "$d3" != "$d2" ] || fail "no new domain"
expect_eq "history" "$(sdctl history --json | jq -r '.[-1] | "\(.ok) \(.old_domid)->\(.new_domid) \(.reconnected)/\(.devices)"')" \
    "true $d2->$d3 1/1"
expect_eq "recoveries" "$(sdctl history --json | jq length)" 2
expect_check_clean
exit 0
