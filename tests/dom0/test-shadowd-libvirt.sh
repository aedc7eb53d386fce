#!/usr/bin/env bash
# The libvirt domain driver against libvirt's built-in test driver (real
# libvirt code in shadowd's process, no daemon): a domain is created from the
# operator's XML, its death is seen through libvirt's lifecycle events (run
# on shadowd's own poll loop), it is destroyed and created again; a planned
# restart; a warm standby created from the same XML under the name drv.2
# and promoted; a running domain of a node XML (test:///PATH) adopted at
# start, and a defined, shut-off one started with virDomainCreate. What the test driver cannot show: its domains run nothing (no
# agent, so heartbeat-timeout off, and no devices to rewire), and its state
# lives in one process (test:///default starts empty in each shadowd).
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
X=$TEST_TMP/drv.xml
printf '%s\n' "<domain type='test'>" "  <name>drv</name>" "  <uuid>0b6c3e5a-2f41-4d8e-9a57-3c1d2e4f5a61</uuid>" \
    "  <memory>8192</memory>" "  <os><type>hvm</type></os>" "</domain>" >"$X"
lvconf() {
    sd_conf "libvirt-uri $1"
    shift
    {
        echo "domain drv {"
        echo "    driver libvirt"
        echo "    libvirt-xml $X"
        echo "    heartbeat-timeout off"
        echo "    backoff-initial 100ms"
        local l
        for l in "$@"; do echo "    $l"; done
        echo "}"
    } >>"$SD_CONF"
}
recoveries_are() { [ "$(sd_q drv .recoveries)" = "$1" ] && [ "$(sd_state drv)" = up ]; }

lvconf test:///default
"$SHADOWD" -n -c "$SD_CONF" >/dev/null || fail "config refused: $("$SHADOWD" -n -c "$SD_CONF" 2>&1)"
sd_start
wait_for 10 sd_state_is drv up
d1=$(sd_domid drv)
expect_eq "driver" "$(sd_q drv .driver)" libvirt
sd_log_has "driver domain $d1 is up" || fail "not started"

# A crash (libvirt: the domain is destroyed): seen through a lifecycle event.
sdctl inject drv crash >/dev/null
wait_for 10 recoveries_are 1
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new domain"
sd_log_has "libvirt: event 5/1 for domain $d1 \(drv\)" || fail "no STOPPED/DESTROYED event for $d1"
sd_log_has "recovery [0-9]+: detect: domain $d1 is gone" || fail "not detected as gone"
sdctl metrics | grep -qx 'shadowd_detections_total{domain="drv",source="death"} 1' ||
    fail "detection not counted as a death"
expect_eq "history" "$(sdctl history --json | jq -r '.[-1] | "\(.ok) \(.old_domid)->\(.new_domid)"')" \
    "true $d1->$d2"

# Paused (inject hang: virDomainSuspend), then a planned restart destroys it and creates anew.
sdctl inject drv hang >/dev/null
sdctl restart drv >/dev/null
wait_for 10 recoveries_are 2
d3=$(sd_domid drv)
[ "$d3" != "$d2" ] || fail "planned restart: no new domain"
expect_eq "planned" "$(sdctl history --json | jq -r '.[-1] | "\(.ok) \(.kind)"')" "true planned"
expect_check_clean
sd_stop

# Warm standby: drv.2 from the same XML (renamed, without its uuid), promoted.
lvconf test:///default "standby on"
sd_start
wait_for 10 sd_state_is drv up
wait_for 10 test "$(sd_q drv .standby.state)" = ready
s1=$(sd_q drv .standby.domid)
expect_eq "standby name" "$(sd_q drv .standby.name)" drv.2
sdctl inject drv crash >/dev/null
wait_for 10 recoveries_are 1
expect_eq "promoted" "$(sd_domid drv)" "$s1"
expect_eq "warm" "$(sdctl history --json | jq -r '.[-1].warm')" true
wait_for 10 test "$(sd_q drv .standby.state)" = ready
[ "$(sd_q drv .standby.domid)" != "$s1" ] || fail "no fresh standby"
expect_eq "the fresh standby takes the freed name" "$(sd_q drv .standby.name)" drv
expect_check_clean
sd_stop

# A node XML with drv already running: adopted, not created.
N=$TEST_TMP/node.xml
printf '%s\n' "<node>" "  <domain type='test'>" "    <name>drv</name>" "    <memory>8192</memory>" \
    "    <os><type>hvm</type></os>" "  </domain>" "</node>" >"$N"
rm -rf "$TEST_TMP/state"
lvconf "test://$N"
sd_start
wait_for 10 sd_state_is drv up
sd_log_has "adopted running domain $(sd_domid drv)" || fail "the node's domain was not adopted"
sd_stop

# A node XML with drv defined but shut off (the test driver's runstate 5):
# started from the definition libvirt holds (virDomainCreate), not the file.
printf '%s\n' "<node>" "  <domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>" \
    "    <name>drv</name>" "    <memory>8192</memory>" "    <os><type>hvm</type></os>" \
    "    <test:runstate>5</test:runstate>" "  </domain>" "</node>" >"$N"
rm -rf "$TEST_TMP/state"
lvconf "test://$N"
sd_start
wait_for 10 sd_state_is drv up
sd_log_has "libvirt: started drv from the definition libvirt holds" || fail "not started with virDomainCreate"
sdctl inject drv crash >/dev/null
wait_for 10 recoveries_are 1
sd_log_has "libvirt: started drv from the definition libvirt holds.*" || fail "restart"
expect_eq "started again from its definition" \
    "$(grep -c 'libvirt: started drv from the definition libvirt holds' "$SD_LOG")" 2
exit 0
