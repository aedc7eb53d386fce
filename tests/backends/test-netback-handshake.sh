#!/usr/bin/env bash
# The xenbus handshake: netback publishes netif.h's feature keys before
# InitWait, connects a frontend (TAP vif<fe>.<dev> on br0 in the driver
# domain's namespace, up, MAC fe:ff:ff:ff:ff:ff, the default MTU), and on the
# frontend's Closing goes Closed and removes the TAP.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup
be=$(vif_be "$drv" "$guest" $DEV)
for kv in feature-rx-copy=1 feature-rx-flip=0 feature-sg=1 feature-gso-tcpv4=1 \
    feature-gso-tcpv6=1 feature-ipv6-csum-offload=1 feature-multicast-control=1 \
    feature-dynamic-multicast-control=1 feature-split-event-channels=1 \
    multi-queue-max-queues=4 hotplug-status=connected; do
    expect_eq "${kv%%=*}" "$(xenstore-read "$be/${kv%%=*}")" "${kv#*=}"
done
tap=vif$guest.$DEV
out=$TEST_TMP/front.out
netfront_bg "$out" "$guest" $DEV connect wait-file "$TEST_TMP/go" close
wait_line "$out" '^ok: connected' 20
expect_eq "backend state" "$(vif_state "$drv" "$guest" $DEV)" 4
link=$(in_d ip -o link show "$tap") || fail "no $tap in the driver domain's namespace"
log "$link"
echo "$link" | grep -q "master br0" || fail "$tap is not on br0"
echo "$link" | grep -q "mtu 1500" || fail "$tap: MTU not 1500"
echo "$link" | grep -q "link/ether fe:ff:ff:ff:ff:ff" || fail "$tap: MAC not fe:ff:ff:ff:ff:ff"
echo "$link" | grep -qE "<[^>]*UP" || fail "$tap is not up"
xenstore-read "$be/error" 2>/dev/null && fail "error node while connected"
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "frontend: $(cat "$out")"
cat "$out"
wait_for 10 vif_state_is "$drv" "$guest" $DEV 6
in_d ip link show "$tap" >/dev/null 2>&1 && fail "$tap still there after Closed"
grep -q "connected to" "$NB_LOG" || fail "no connect line in the log"
netback_alive || fail "netback exited"
exit 0
