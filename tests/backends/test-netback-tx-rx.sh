#!/usr/bin/env bash
# The basic path both ways. Guest transmit: UDP frames in one slot, in
# several slots at odd offsets, and with partial checksums (NETTXF_csum_blank,
# completed by the kernel from the virtio header) reach a UDP socket in a
# server namespace behind the bridge, every payload byte checked. Guest
# receive: datagrams sent by that socket arrive in the guest's posted buffers
# (rx-copy), answered in the slots of the requests they used, echoed ids,
# every byte checked; checksums completed for a frontend without checksum
# offload.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup
pout=$TEST_TMP/peer.out
peer_bg "$pout" recv-udp 7000 80 30
wait_line "$pout" '^# listening' 10
out=$TEST_TMP/front.out
netfront_bg "$out" "$guest" $DEV connect udp 7000 100 20 udp 7000 1000 20 3 \
    udp-partial 7000 1400 20 2 udp 7000 60 20 wait-file "$TEST_TMP/go" expect-udp 7001 50 stats close
wait $PEER_PID || fail "peer: $(cat "$pout"; cat "$out")"
cat "$pout"
peer send-udp "$GUEST_IP" 7001 1200 50 || fail "peer send-udp"
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "frontend: $(cat "$out")"
cat "$out"
grep -q 'ok: received 50 UDP frames to port 7001' "$out" || fail "rx"
grep -q 'tx 80 packets' "$NB_LOG" || fail "netback did not count 80 tx packets: $(grep 'tx ' "$NB_LOG")"

# A frontend that takes no partial checksums (feature-no-csum-offload=1): netback
# completes them; netfront checks every UDP checksum it is not told is blank.
rm -f "$TEST_TMP/go"
netfront_bg "$out" "$guest" $DEV --no-csum connect wait-file "$TEST_TMP/go" expect-udp 7001 20 close
wait_line "$out" '^ok: connected' 20
peer send-udp "$GUEST_IP" 7001 1000 20 || fail "peer send-udp"
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "frontend (no csum offload): $(cat "$out")"
cat "$out"
grep -q 'ok: received 20 UDP frames to port 7001 (up to 1 slots, 0 with csum_blank)' "$out" ||
    fail "partial checksums given to a frontend that does not take them"
netback_alive || fail "netback exited"
exit 0
