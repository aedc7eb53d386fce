#!/usr/bin/env bash
# A hostile frontend (nhostile: seeded random tx slots, malformed packets,
# junk rx buffers, slots rewritten after the push, garbage ring indexes,
# multicast floods, junk xenstore keys, odd options, reconnections) for a
# bounded time: netback never crashes or hangs - every answer has a status
# netif.h defines and stays inside the ring and the page, a fresh connection
# always carries a valid frame, it is ASan/UBSan clean, and a good frontend
# is served afterwards. Rerun one seed with NBHOSTILE_SEED=<seed>.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
seed=${NBHOSTILE_SEED:-$(( $(date +%s%N) % 1000000007 ))}
secs=${NBHOSTILE_SECONDS:-20}
log "seed=$seed seconds=$secs"
vif_setup
# Traffic towards the guest meanwhile (datagrams of every size, TSO frames),
# so that the rx side meets the junk buffers and the reconnections too.
feed() {
    local end=$((SECONDS + secs + 5)) n=0
    while [ $SECONDS -lt $end ]; do
        peer send-udp "$GUEST_IP" 7001 $((8 + (n * 997) % 4000)) 40 >/dev/null
        peer send-gso vs0 "$GUEST_MAC" "$GUEST_IP" 7002 $((1000 + (n * 7919) % 60000)) 1400 >/dev/null
        n=$((n + 1))
        sleep 0.05
    done
}
feed &
feeder=$!
on_exit "kill $feeder 2>/dev/null"
out=$TEST_TMP/hostile.out
as_dom "$guest" "$TPROG/backends/nhostile" "$(vif_fe "$guest" $DEV)" "$seed" "$secs" >"$out" 2>&1
rc=$?
kill $feeder 2>/dev/null
tail -5 "$out"
[ $rc -eq 0 ] || fail "hostile frontend (seed $seed): $(grep -m1 HOSTILE-FAIL "$out")"
grep -q HOSTILE-OK "$out" || fail "hostile frontend did not finish"
netback_alive || fail "netback died (seed $seed): $(tail -5 "$NB_LOG")"
grep -q 'not serving this queue' "$NB_LOG" || fail "no garbage index was detected (seed $seed)"
pout=$TEST_TMP/peer.out
peer_bg "$pout" recv-udp 7000 10 30
wait_line "$pout" '^# listening' 10
netfront "$guest" $DEV connect udp 7000 300 10 2 close || fail "good frontend refused after"
wait $PEER_PID || fail "peer after the hostile run: $(cat "$pout")"
grep -E '^netback.*: tx [0-9]+ packets' "$NB_LOG" | awk '{rx += $12} END {print "# rx packets over all connections:", rx}'
log "netback log: $(wc -l <"$NB_LOG") lines"
exit 0
