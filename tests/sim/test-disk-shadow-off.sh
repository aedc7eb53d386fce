#!/usr/bin/env bash
# The plugin's benchmark mode, shadow=off (no retention, no private copies
# of write data: the caller's buffer is used), is still a correct frontend:
# over blkback with cache=none (O_DIRECT: an acknowledged write is in the
# file, a kill cannot lose it) ext4 survives driver-domain kills, crashes and
# a corrupt response with shadowd restarting; the workload sees no error,
# fsck is clean and every fsynced file is on the backing file. The plugin
# says it runs without retention.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../dom0/dom0-functions.sh"
source "$(dirname "$0")/../frontends/rewire-functions.sh"
source "$(dirname "$0")/disk-functions.sh"
private_mounts "$@"
disk_setup none shadow=off deadline-ms=1500
grep -q 'retention off: shadow=off' "$TEST_TMP/guest.log" || fail "the plugin does not say shadow=off"
workload_start 60 11
for k in kill crash kill corrupt crash; do
    sleep 1.5
    workload_running || fail "the workload ended early: $(tail -2 "$TEST_TMP/workload.out")"
    sd_fault "$k"
    log "$k: $(fe_key "$guest" "$DEV" shadow/last-recovery)"
done
workload_stop
workload_done
disk_finish
grep -q 'first-replayed=' "$TEST_TMP/guest.log" && log "$(grep -c 'first-replayed=' "$TEST_TMP/guest.log") recoveries replayed outstanding requests"
exit 0
