#!/usr/bin/env bash
# Scatter-gather and segmentation offload, both ways. Guest transmit: a frame
# in 18 slots (the most a packet may use) and a 60000-byte TCP frame with a
# GSO extra-info slot reach the server side, every stream byte checked
# however the kernel segments it. Guest receive: a TSO frame sent into the
# bridge arrives as one packet over several slots with a GSO extra-info slot
# (frontend with feature-gso-tcpv4), or already segmented (frontend without).
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup
pout=$TEST_TMP/peer.out
peer_bg "$pout" recv-tcp vs0 7100 60000 30
wait_line "$pout" '^# capturing' 10
uout=$TEST_TMP/peer-udp.out
peer_bg "$uout" recv-udp 7000 1 30
upid=$PEER_PID
wait_line "$uout" '^# listening' 10
out=$TEST_TMP/front.out
netfront_bg "$out" "$guest" $DEV connect udp 7000 1400 1 18 tcp-gso 7100 60000 1400 \
    wait-file "$TEST_TMP/go" expect-tcp 7200 60000 close
wait $upid || fail "peer (udp): $(cat "$uout"; cat "$out")"
wait $PEER_PID || fail "peer (tcp): $(cat "$pout"; cat "$out")"
cat "$uout" "$pout"
grep -qE 'in 1 frames .* 1 GSO with mss 1400|in [2-9][0-9] frames .* 0 GSO' "$pout" ||
    fail "the guest's GSO frame lost its segment size"
wait_line "$out" '^ok: sent a GSO TCP frame' 10
peer send-gso vs0 "$GUEST_MAC" "$GUEST_IP" 7200 60000 1400 || fail "peer send-gso"
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "frontend: $(cat "$out")"
cat "$out"
grep -qE 'ok: received 60000 TCP stream bytes in 1 frames \(1 with a GSO extra' "$out" ||
    fail "the TSO frame did not arrive whole with a GSO extra"

# A TSO frame that fits one page: one data slot with NETRXF_extra_info and no
# NETRXF_more_data, then its extra-info slot (netif.h: the extra follows the
# first slot whatever more_data says).
out1=$TEST_TMP/front1.out
rm -f "$TEST_TMP/go"
netfront_bg "$out1" "$guest" $DEV connect wait-file "$TEST_TMP/go" expect-tcp 7300 2000 \
    wait-file "$TEST_TMP/go2" expect-tcp 7301 3000 close
wait_line "$out1" '^ok: connected' 20
peer send-gso vs0 "$GUEST_MAC" "$GUEST_IP" 7300 2000 1400 || fail "peer send-gso (one page)"
touch "$TEST_TMP/go"
wait_line "$out1" '^ok: received 2000 TCP' 10 || fail "one-page TSO frame: $(cat "$out1")"
peer send-gso vs0 "$GUEST_MAC" "$GUEST_IP" 7301 3000 1400 || fail "peer send-gso (the next)"
touch "$TEST_TMP/go2"
wait $FRONT_PID || fail "frontend (one-page TSO): $(cat "$out1")"
cat "$out1"
grep -qE 'ok: received 2000 TCP stream bytes in 1 frames \(1 with a GSO extra' "$out1" ||
    fail "the one-page TSO frame did not arrive whole with its GSO extra"
grep -qE 'ok: received 3000 TCP stream bytes in 1 frames \(1 with a GSO extra' "$out1" ||
    fail "the frame after a one-page TSO frame was misread"

# A frontend that takes no GSO gets the same stream in MSS-sized frames.
out2=$TEST_TMP/front2.out
rm -f "$TEST_TMP/go"
netfront_bg "$out2" "$guest" $DEV --no-gso connect wait-file "$TEST_TMP/go" expect-tcp 7200 60000 close
wait_line "$out2" '^ok: connected' 20
peer send-gso vs0 "$GUEST_MAC" "$GUEST_IP" 7200 60000 1400 || fail "peer send-gso"
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "frontend (no gso): $(cat "$out2")"
cat "$out2"
grep -qE 'in ([2-9][0-9]) frames \(0 with a GSO extra' "$out2" || fail "not segmented for a no-GSO frontend"
netback_alive || fail "netback exited"
exit 0
