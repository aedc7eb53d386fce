#!/usr/bin/env bash
# A toolstack's destroy is a failure from its first step, not from the
# domain's death: `xl destroy` pauses the driver domain, removes its console
# dir and its own devices, then its xenstore dir, and only then destroys it
# (@releaseDomain 1.1-1.5 s after the pause on Xen in QEMU). shadowd watches
# the serving domain's console dir: gone while the domain is paused is a
# failure at once (no pause-timeout, no heartbeat-timeout); gone while it
# runs is not (logged), and a domain without one (xensim's) is never judged
# by it. A cold restart then leaves the domain to the toolstack destroying
# it - the create comes after the domain is gone, with no destroy of
# shadowd's racing the toolstack's - and destroys it itself only if it is
# still there 10 s later. Here the test plays libxl's part on xensim: it
# writes a console dir, pauses the domain, removes the dir and (or not)
# destroys the domain.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read xenstore-write xenstore-rm
start_sim
sd_conf
# Both timeouts far away: only the console's removal can find the failure soon.
sd_domain drv "heartbeat-timeout 20s" "pause-timeout 20s"
sd_start
d1=$(sd_wait_up drv)
g=$(new_dom guest)
dev_add "$g" "$d1" 51712
fe_start "$g" 51712 --deadline-ms 30000
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1
console() { xenstore-write "/local/domain/$1/console/ring-ref" 7 "/local/domain/$1/console/port" 3; }

# 1. Removed while the domain runs: logged, nothing else.
console "$d1"
sleep 0.5
xenstore-rm "/local/domain/$d1/console"
wait_for 5 sd_log_has "domain $d1: its console dir went away while it runs: not a failure"
sleep 1
expect_eq "still serving" "$(sd_domid drv)" "$d1"
expect_eq "no recovery" "$(sd_q drv .recoveries)" 0

# 2. Written again, the domain paused, then removed: a recovery at once;
# the toolstack destroys the domain 1.5 s later, and only then is the new
# one created.
console "$d1"
sleep 0.5
"$XENSIM" pause "$d1"
t0=$(now_ms)
xenstore-rm "/local/domain/$d1/console"
wait_for 10 sd_log_has "detect: domain $d1: paused and its console removed"
took=$(($(now_ms) - t0))
[ "$took" -lt 5000 ] || fail "found $took ms after the removal (pause-timeout is 20 s)"
sleep 1.5
sd_log_has "recovery 2: restart: creating" && fail "created before the old domain was gone"
"$XENSIM" destroy "$d1"
wait_recovered "$g" 51712 1
after=$(sed -n 's/.*recovery 2: restart: creating drv, \([0-9]*\) ms after the detection.*/\1/p' "$SD_LOG")
[ -n "$after" ] && [ "$after" -ge 1400 ] || fail "create ${after:-?} ms after the detection, not after the toolstack's destroy"
sd_log_has "recovery 2: restart: destroying the old domain failed" && fail "shadowd raced the toolstack's destroy"
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new driver domain"
expect_eq "detected as a pause" "$(sd_detections pause)" 1
expect_eq "not by heartbeat" "$(sd_detections heartbeat)" 0
log "a paused domain's console removed: recovery begun within $took ms"

# 3. The new domain has no console dir (xensim's do not): nothing to judge,
# it serves on.
wait_for 10 sd_state_is drv up
sleep 1
expect_eq "serving" "$(sd_domid drv)" "$d2"
expect_check_clean

# 4. A teardown the toolstack does not finish: shadowd destroys the domain
# itself after 10 s, and the recovery goes on.
console "$d2"
sleep 0.5
"$XENSIM" pause "$d2"
xenstore-rm "/local/domain/$d2/console"
wait_for 10 sd_log_has "detect: domain $d2: paused and its console removed"
wait_recovered "$g" 51712 2 25
after=$(sed -n 's/.*recovery 3: restart: creating drv, \([0-9]*\) ms after the detection.*/\1/p' "$SD_LOG")
[ -n "$after" ] && [ "$after" -ge 9500 ] || fail "recovery 3 created ${after:-?} ms after the detection, want after the 10 s wait"
expect_eq "the old domain destroyed by shadowd" "$("$XENSIM" info "$d2" >/dev/null 2>&1 && echo exists || echo gone)" gone
log "toolstack's destroy waited for: created $after ms after the detection when it never came"
expect_check_clean
exit 0
