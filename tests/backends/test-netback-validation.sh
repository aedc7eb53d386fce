#!/usr/bin/env bash
# Every malformed tx packet is dropped with NETIF_RSP_ERROR on each of its
# data slots (NETIF_RSP_NULL on its extra-info slots), with a log line, and
# the queue keeps serving: more than 18 data slots, smaller than an Ethernet
# header, a slot crossing its page or starting past it, fragments larger than
# the packet size (the first slot's size less than the sum), bad grant refs in
# the first or a later slot, unknown/NONE/repeated extra-info types, a bad GSO type or size, GSO
# on a packet that is not TCP of that IP version, a partial checksum on a
# non-IP frame, a unicast multicast-add. A packet whose slots are not all
# posted waits for the rest. Then broken rings: a tx req_prod far past the
# ring, and a packet whose more_data never ends (a full ring) - netback
# stops serving that queue and goes Closing, and a new connection works.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup
pout=$TEST_TMP/peer.out
peer_bg "$pout" recv-udp 7000 10 30
wait_line "$pout" '^# listening' 10
kinds=(slots-19 size-small cross-page cross-page-frag first-offset frag-offset frags-bigger
    bad-gref bad-gref-frag extra-unknown extra-none extra-dup gso-type gso-size0 gso-mismatch gso-not-tcp csum-not-ip
    mcast-unicast)
# Paced: netback rate-limits what a peer can make it log (10 lines a second).
cmds=()
for k in "${kinds[@]}"; do cmds+=(bad "$k" sleep 120); done
out=$TEST_TMP/front.out
netfront "$guest" $DEV connect "${cmds[@]}" split-push udp 7000 500 10 2 stats close >"$out" 2>&1 ||
    fail "frontend: $(cat "$out")"
cat "$out"
wait $PEER_PID || fail "peer: $(cat "$pout")"
for k in "${kinds[@]}"; do
    grep -q "^ok: bad $k " "$out" || fail "bad $k not checked"
done
for why in "more data slots than a packet may use" "smaller than an Ethernet header" \
    "crosses its page" "slots hold more than the packet size" "grant copy failed" \
    "unknown extra-info type" "extra-info type repeated" "unknown GSO type" "GSO segment size 0" \
    "GSO type does not match" "not IPv4 or IPv6" "multicast add"; do
    grep -q "$why" "$NB_LOG" || fail "no log line '$why'"
done
netback_alive || fail "netback died"
wait_for 10 vif_state_is "$drv" "$guest" $DEV 6

netfront "$guest" $DEV connect garbage-index >"$out" 2>&1 || fail "garbage index: $(cat "$out")"
cat "$out"
grep -q "not serving this queue" "$NB_LOG" || fail "no log line for the broken ring"
netfront "$guest" $DEV connect endless >"$out" 2>&1 || fail "endless packet: $(cat "$out")"
cat "$out"
grep -q "a packet longer than the ring" "$NB_LOG" || fail "no log line for the endless packet"
netfront "$guest" $DEV connect udp 7000 100 5 close >"$out" 2>&1 || fail "after: $(cat "$out")"
netback_alive || fail "netback died"
exit 0
