#!/usr/bin/env bash
# The backend's rate key, as libxl writes it ("<bytes>,<usecs>"): the guest's
# transmit is held to that credit - 1 MB at 25000 bytes per 50 ms cannot take
# less than (1 MB - one period's credit) / 500 kB/s - and nothing is dropped
# on the way: every frame arrives. (A lower bound only: a slow machine makes
# it longer, never shorter.) The same transfer unlimited is printed beside it.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup rate=25000,50000
grep -q "rate 25000 bytes per 50000 us" "$NB_LOG" || fail "rate not read: $(head -2 "$NB_LOG")"
pout=$TEST_TMP/peer.out
peer_bg "$pout" recv-udp 7000 1000 60
wait_line "$pout" '^# listening' 10
out=$TEST_TMP/front.out
netfront "$guest" $DEV --queues 2 --timeout 60 connect blast 7000 1000000 958 close >"$out" 2>&1 ||
    fail "frontend: $(cat "$out")"
cat "$out"
wait $PEER_PID || fail "peer: $(cat "$pout")"
cat "$pout"
ms=$(sed -n 's/^ok: blast [0-9]* bytes in \([0-9]*\) ms.*/\1/p' "$out")
# (1000000 - 65536 of initial credit at most) / 500 bytes per ms = 1869 ms.
[ "${ms:-0}" -ge 1869 ] || fail "1 MB at 500 kB/s took ${ms:-?} ms, under 1869"
log "limited: $ms ms"

# Unlimited, for comparison (printed, not asserted).
kill -TERM $NB_PID
netback_wait_exit 10
xenstore-rm "$(vif_be "$drv" "$guest" $DEV)/rate"
netback_start "$drv" "$guest" $DEV
# The frontend closed: the new netback follows it to Closed; connect wakes it.
wait_line "$NB_LOG" "rate unlimited" 10
netfront "$guest" $DEV --queues 2 connect blast 7000 1000000 958 close >"$out" 2>&1 ||
    fail "frontend (unlimited): $(cat "$out")"
log "unlimited: $(grep blast "$out")"
exit 0
