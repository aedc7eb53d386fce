#!/usr/bin/env bash
# The backend's mtu key: the TAP gets that MTU; jumbo frames pass both ways
# (guest transmit over several slots; guest receive over several buffers,
# NETRXF_more_data, for a frontend with feature-sg). A frontend without
# feature-sg gets only what fits one buffer: a larger frame is dropped and
# counted, never split or truncated.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup mtu=9000
tap=vif$guest.$DEV
for i in vd0 br0; do in_d ip link set $i mtu 9000 || fail "mtu $i"; done
in_s ip link set vs0 mtu 9000 || fail "mtu vs0"
pout=$TEST_TMP/peer.out
peer_bg "$pout" recv-udp 7000 10 30
wait_line "$pout" '^# listening' 10
out=$TEST_TMP/front.out
netfront_bg "$out" "$guest" $DEV connect udp 7000 8900 10 3 wait-file "$TEST_TMP/go" \
    expect-udp 7001 10 close
wait_line "$out" '^ok: connected' 20
in_d ip -o link show "$tap" | grep -q "mtu 9000" || fail "$tap: $(in_d ip -o link show "$tap")"
wait $PEER_PID || fail "peer: $(cat "$pout"; cat "$out")"
cat "$pout"
peer send-udp "$GUEST_IP" 7001 8900 10 || fail "peer send-udp"
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "frontend: $(cat "$out")"
cat "$out"
grep -q 'ok: received 10 UDP frames to port 7001 (up to 3 slots' "$out" ||
    fail "jumbo rx not over 3 slots"

# Without feature-sg: one buffer per packet.
rm -f "$TEST_TMP/go"
netfront_bg "$out" "$guest" $DEV --no-sg connect wait-file "$TEST_TMP/go" expect-udp 7002 5 close
wait_line "$out" '^ok: connected' 20
peer send-udp "$GUEST_IP" 7001 8000 3 && peer send-udp "$GUEST_IP" 7002 1000 5 || fail "peer send-udp"
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "frontend (no sg): $(cat "$out")"
cat "$out"
grep -q "rx frame of 8042 bytes dropped: more than the frontend's buffers" "$NB_LOG" ||
    fail "no log line for the dropped jumbo frame"
grep -qE "dropped: 3 too big" "$NB_LOG" || fail "not 3 dropped as too big: $(grep 'too big' "$NB_LOG")"
netback_alive || fail "netback exited"

exit 0
