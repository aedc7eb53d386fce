#!/usr/bin/env bash
# shadowctl inject: corrupt/slow/backend-* write USK_DRV_INJECT in the driver
# domain's dir as "<seq> <fault> [<count>]", a new seq each time, perms
# n0,r<drv> (dom0 writes, the backends only read); crash crashes the domain
# through its driver (and shadowd recovers it); mistakes are refused.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read xenstore-ls
start_sim
sd_conf
sd_domain drv
sd_start
d=$(sd_wait_up drv)
k=/local/domain/$d/data/understudy/inject
perms() { xenstore-ls -p "$(dirname "$k")" | sed -n 's/^inject = .*(\(.*\))$/\1/p'; }

sdctl inject drv corrupt 3 >/dev/null || fail "inject corrupt 3"
expect_eq "inject key" "$(xenstore-read "$k")" "1 corrupt 3"
expect_eq "inject perms" "$(perms)" "n0,r$d"
sdctl inject drv slow 250 >/dev/null || fail "inject slow"
expect_eq "next seq" "$(xenstore-read "$k")" "2 slow 250"
sdctl inject drv backend-hang >/dev/null || fail "inject backend-hang"
expect_eq "backend hang" "$(xenstore-read "$k")" "3 hang"
sdctl inject drv backend-crash >/dev/null || fail "inject backend-crash"
expect_eq "backend crash" "$(xenstore-read "$k")" "4 crash"
# The driver domain cannot forge it.
as_dom "$d" xenstore-write "$k" "99 crash" 2>/dev/null && fail "the driver domain wrote its inject key"
expect_check_clean

out=$(sdctl inject drv meltdown 2>&1) && fail "unknown fault accepted"
echo "$out" | grep -q "unknown fault 'meltdown'" || fail "message: $out"
out=$(sdctl inject nosuch crash 2>&1) && fail "unknown domain accepted"
echo "$out" | grep -q "no driver domain 'nosuch'" || fail "message: $out"
out=$(sdctl inject drv crash 3 2>&1) && fail "crash with a count accepted"
out=$(sdctl inject drv slow soon 2>&1) && fail "bad count accepted"
echo "$out" | grep -q "COUNT 'soon' is not a whole number" || fail "message: $out"
sdctl frobnicate >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad command is a usage error (exit 2)"

sdctl inject drv crash >/dev/null || fail "inject crash"
wait_for 10 sd_log_has "detect: domain $d shut down \(reason crash\)"
_restarted() { [ "$(sd_state drv)" = up ] && [ "$(sd_domid drv)" != "$d" ]; }
wait_for 10 _restarted
expect_check_clean
exit 0
