#!/usr/bin/env bash
# Guest receive when buffers are short. A frontend with one rx buffer that
# stops reading for a while: netback holds the frame it cannot place, does
# not read its TAP meanwhile (the kernel queues) and does not spin; once the
# frontend reads again, every frame of the burst arrives, one buffer at a
# time. A frame that needs more buffers than the frontend ever posts (a TSO
# frame over 16 slots, 4 buffers posted) is dropped after a bounded wait,
# logged and counted, and the frames behind it are delivered.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup
cpu() { awk '{print $14 + $15}' "/proc/$NB_PID/stat"; }
out=$TEST_TMP/front.out
netfront_bg "$out" "$guest" $DEV --rx-bufs 1 connect sleep 1500 expect-udp 7001 40 close
wait_line "$out" '^ok: connected' 20
peer send-udp "$GUEST_IP" 7001 600 40 || fail "peer send-udp"
c0=$(cpu)
sleep 1
c1=$(cpu)
[ $((c1 - c0)) -lt 30 ] || fail "netback used $((c1 - c0)) ticks in 1 s while waiting for buffers"
wait $FRONT_PID || fail "frontend: $(cat "$out")"
cat "$out"

rm -f "$TEST_TMP/go"
netfront_bg "$out" "$guest" $DEV --rx-bufs 4 connect wait-file "$TEST_TMP/go" expect-udp 7002 10 close
wait_line "$out" '^ok: connected' 20
peer send-gso vs0 "$GUEST_MAC" "$GUEST_IP" 7003 60000 1400 || fail "peer send-gso"
peer send-udp "$GUEST_IP" 7002 300 10 || fail "peer send-udp"
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "frontend (4 buffers): $(cat "$out")"
cat "$out"
grep -qE "rx frame of 60054 bytes dropped: waited [0-9]+ ms for 16 rx buffers" "$NB_LOG" ||
    fail "no log line for the frame that never fit: $(grep 'rx frame' "$NB_LOG")"
grep -q "1 no buffers" "$NB_LOG" || fail "not counted: $(grep 'no buffers' "$NB_LOG")"
netback_alive || fail "netback exited"
exit 0
