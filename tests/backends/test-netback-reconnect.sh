#!/usr/bin/env bash
# Reconnection by the frontend: traffic, a reconnect (Initialising -> new
# rings, new event channels, another queue count), traffic again both ways;
# a frontend that vanishes without closing (its process killed, state left
# Connected) is replaced by a new one; the TAP is the same interface name
# throughout and stays on the bridge.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup
tap=vif$guest.$DEV
pout=$TEST_TMP/peer.out
peer_bg "$pout" recv-udp 7000 30 30
wait_line "$pout" '^# listening' 10
out=$TEST_TMP/front.out
netfront "$guest" $DEV connect udp 7000 300 10 reconnect udp 7000 300 10 close >"$out" 2>&1 ||
    fail "frontend: $(cat "$out")"
cat "$out"
# Killed while connected: nothing closes; the next frontend starts over.
netfront_bg "$out" "$guest" $DEV --queues 2 --split connect sleep 100000
wait_line "$out" '^ok: connected' 20
kill -KILL $FRONT_PID
wait $FRONT_PID 2>/dev/null
rm -f "$TEST_TMP/go"
netfront_bg "$out" "$guest" $DEV connect udp 7000 300 10 wait-file "$TEST_TMP/go" expect-udp 7001 10 close
wait $PEER_PID || fail "peer: $(cat "$pout"; cat "$out")"
cat "$pout"
in_d ip -o link show "$tap" | grep -q "master br0" || fail "$tap not on br0 after reconnecting"
peer send-udp "$GUEST_IP" 7001 300 10 || fail "peer send-udp"
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "frontend after the kill: $(cat "$out")"
cat "$out"
n=$(grep -c "connected to " "$NB_LOG")
[ "$n" -eq 4 ] || fail "$n connections, want 4"
netback_alive || fail "netback exited"
exit 0
