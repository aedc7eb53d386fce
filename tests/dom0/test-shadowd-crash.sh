#!/usr/bin/env bash
# A driver domain that crashes is restarted by shadowd and its device rewired:
# the new backend dir holds the recorded toolstack keys (and none of what the
# backend published), the guest's frontend dir is updated in place (backend,
# backend-id, permissions, generation bumped; never deleted, state left to the
# frontend), the frontend reconnects to the same device, each phase is logged
# and timed, and the store passes shadowctl check before and after.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf
sd_domain drv
sd_start
d1=$(sd_wait_up drv)
g=$(new_dom guest)
dev_add "$g" "$d1" 51712 cache=writeback rate=10Mb/s
fe=$(fe_dir "$g" 51712)
xenstore-write "$fe/test-marker" kept && xenstore-chmod "$fe/test-marker" "n$g" "r$d1"
fe_start "$g" 51712
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1

# What was recorded: the toolstack's keys, not the backend's.
keys=$(sd_q drv '.devices[0].keys | keys | join(" ")')
for k in params mode type dev cache rate device-type removable bootable; do
    [[ " $keys " == *" $k "* ]] || fail "toolstack key $k not recorded (recorded: $keys)"
done
for k in state sectors feature-tbe info tbe-pid frontend frontend-id online; do
    [[ " $keys " == *" $k "* ]] && fail "backend-published or rewritten key $k was recorded ($keys)"
done
expect_check_clean
sectors=$(xenstore-read "$(be_dir "$d1" "$g" 51712)/sectors")

"$XENSIM" crash "$d1"
wait_recovered "$g" 51712 1
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new driver domain (still $d1)"
wait_for 10 sd_state_is drv up
expect_eq "FE/backend" "$(fe_key "$g" 51712 backend)" "$(be_dir "$d2" "$g" 51712)"
expect_eq "FE/backend-id" "$(fe_key "$g" 51712 backend-id)" "$d2"
expect_eq "FE/shadow/generation" "$(fe_key "$g" 51712 shadow/generation)" 1
expect_eq "FE dir kept in place" "$(fe_key "$g" 51712 test-marker)" kept
expect_eq "FE/state (the frontend's)" "$(fe_key "$g" 51712 state)" 4
be2=$(be_dir "$d2" "$g" 51712)
for kv in params="$TEST_TMP/disk-$g-51712.img" mode=w cache=writeback rate=10Mb/s \
          frontend="$fe" frontend-id="$g" online=1; do
    expect_eq "new BE/${kv%%=*}" "$(xenstore-read "$be2/${kv%%=*}")" "${kv#*=}"
done
expect_eq "the same device (sectors from params)" "$(xenstore-read "$be2/sectors")" "$sectors"
expect_eq "new BE perms" "$(xenstore-ls -p "$(dirname "$be2")" | sed -n 's/^51712 = .*(\(.*\))$/\1/p')" \
    "n$d2,r$g"
expect_eq "FE perms" "$(xenstore-ls -p "$(dirname "$fe")" | sed -n 's/^51712 = .*(\(.*\))$/\1/p')" \
    "n$g,r$d2"
expect_check_clean

# One line per phase, and the recovery in history, status keys and metrics.
for p in detect restart rewire reconnect; do
    sd_log_has "drv: recovery [0-9]+: $p: " || fail "no log line for phase $p"
done
sd_log_has "recovery [0-9]+: detect: domain $d1 shut down \(reason crash\)" || fail "detect reason"
h=$(sdctl history --json)
expect_eq "recoveries in history" "$(echo "$h" | jq length)" 1
expect_eq "history ok" "$(echo "$h" | jq -r '.[0].ok')" true
expect_eq "history domains" "$(echo "$h" | jq -r '"\(.[0].old_domid)->\(.[0].new_domid)"')" "$d1->$d2"
total=$(echo "$h" | jq '.[0].detect_ms + .[0].restart_ms + .[0].rewire_ms + .[0].reconnect_ms')
expect_eq "phases add up" "$total" "$(echo "$h" | jq '.[0].total_ms')"
log "phases: $(echo "$h" | jq -c '.[0] | {detect_ms, restart_ms, rewire_ms, reconnect_ms, total_ms}')"
xenstore-read "$SD_DIR/drv/last-recovery" | grep -qE '^detect=[0-9]+ restart=[0-9]+ rewire=[0-9]+ reconnect=[0-9]+ total=[0-9]+$' ||
    fail "status key last-recovery"
expect_eq "status key recoveries" "$(xenstore-read "$SD_DIR/drv/recoveries")" 1
m=$(sdctl metrics)
echo "$m" | grep -qx 'shadowd_recoveries_total{domain="drv"} 1' || fail "metrics: $m"
echo "$m" | grep -qx 'shadowd_detections_total{domain="drv",source="death"} 1' || fail "detections metric"
expect_eq "restarts" "$(sd_q drv .restarts)" 1
exit 0
