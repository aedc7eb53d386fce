#!/usr/bin/env bash
# A toolstack's destroy is a failure from its first step, not from the
# domain's death: `xl destroy` pauses the driver domain, removes its console
# dir and its own devices, then its xenstore dir, and only then destroys it
# (@releaseDomain 1.1-1.5 s after the pause on Xen in QEMU). shadowd watches
# the serving domain's console dir: gone while the domain is paused is a
# failure at once (no pause-timeout, no heartbeat-timeout); gone while it
# runs is not (logged), and a domain without one (xensim's) is never judged
# by it. Here the test plays libxl's part on xensim: it writes a console dir,
# pauses the domain and removes the dir.
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
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
detections() { sdctl metrics | sed -n "s/^shadowd_detections_total{domain=\"drv\",source=\"$1\"} //p"; }
console() { xenstore-write "/local/domain/$1/console/ring-ref" 7 "/local/domain/$1/console/port" 3; }

# 1. Removed while the domain runs: logged, nothing else.
console "$d1"
sleep 0.5
xenstore-rm "/local/domain/$d1/console"
wait_for 5 sd_log_has "domain $d1: its console dir went away while it runs: not a failure"
sleep 1
expect_eq "still serving" "$(sd_domid drv)" "$d1"
expect_eq "no recovery" "$(sd_q drv .recoveries)" 0

# 2. Written again, the domain paused, then removed: a recovery at once.
console "$d1"
sleep 0.5
"$XENSIM" pause "$d1"
t0=$(now_ms)
xenstore-rm "/local/domain/$d1/console"
wait_for 10 sd_log_has "detect: domain $d1: paused and its console removed"
took=$(($(now_ms) - t0))
[ "$took" -lt 5000 ] || fail "found $took ms after the removal (pause-timeout is 20 s)"
wait_recovered "$g" 51712 1
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new driver domain"
expect_eq "detected as a pause" "$(detections pause)" 1
expect_eq "not by heartbeat" "$(detections heartbeat)" 0
log "a paused domain's console removed: recovery begun within $took ms"

# 3. The new domain has no console dir (xensim's do not): nothing to judge,
# it serves on.
wait_for 10 sd_state_is drv up
sleep 1
expect_eq "serving" "$(sd_domid drv)" "$d2"
expect_check_clean
exit 0
