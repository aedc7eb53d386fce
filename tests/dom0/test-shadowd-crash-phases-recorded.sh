#!/usr/bin/env bash
# A recovery after a crash logs one line per phase and is timed: in history
# (its phases add up to its total), in the status keys and in the metrics.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
sd_one_device_setup
sd_crash_and_recover
for p in detect restart rewire reconnect; do
    sd_log_has "drv: recovery [0-9]+: $p: " || fail "no log line for phase $p"
done
h=$(sdctl history --json)
expect_eq "recoveries in history" "$(echo "$h" | jq length)" 1
expect_eq "history ok" "$(echo "$h" | jq -r '.[0].ok')" true
expect_eq "history domains" "$(echo "$h" | jq -r '"\(.[0].old_domid)->\(.[0].new_domid)"')" "$D1->$D2"
total=$(echo "$h" | jq '.[0].detect_ms + .[0].restart_ms + .[0].rewire_ms + .[0].reconnect_ms')
expect_eq "phases add up" "$total" "$(echo "$h" | jq '.[0].total_ms')"
log "phases: $(echo "$h" | jq -c '.[0] | {detect_ms, restart_ms, rewire_ms, reconnect_ms, total_ms}')"
xenstore-read "$SD_DIR/drv/last-recovery" | grep -qE '^detect=[0-9]+ restart=[0-9]+ rewire=[0-9]+ reconnect=[0-9]+ total=[0-9]+$' ||
    fail "status key last-recovery"
expect_eq "status key recoveries" "$(xenstore-read "$SD_DIR/drv/recoveries")" 1
m=$(sdctl metrics)
echo "$m" | grep -qx 'shadowd_recoveries_total{domain="drv"} 1' || fail "metrics: $m"
echo "$m" | grep -qx 'shadowd_detections_total{domain="drv",source="death"} 1' || fail "detections metric"
exit 0
