#!/usr/bin/env bash
# The driver domain's side fails under a connected vif: the TAP is deleted
# (ip link del). netback notices (read/write on a detached TAP), stops serving
# - no busy loop on the dead descriptor - writes an error node and goes
# Closing; the frontend's next connection gets a new TAP on the bridge and
# traffic flows. An interface already holding the vif's name is not taken
# over: the connection is refused with an error.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup
tap=vif$guest.$DEV
out=$TEST_TMP/front.out
netfront_bg "$out" "$guest" $DEV connect sleep 100000
wait_line "$out" '^ok: connected' 20
in_d ip link del "$tap" || fail "deleting $tap"
wait_for 10 vif_state_is "$drv" "$guest" $DEV 5
grep -q "TAP $tap: .*not serving this device" "$NB_LOG" || fail "no log line: $(tail -3 "$NB_LOG")"
# CPU time over a second: a loop spinning on the dead fd would use all of it.
cpu() { awk '{print $14 + $15}' "/proc/$NB_PID/stat"; }
c0=$(cpu)
sleep 1
c1=$(cpu)
[ $((c1 - c0)) -lt 30 ] || fail "netback used $((c1 - c0)) ticks in 1 s after losing its TAP"
kill -KILL $FRONT_PID
wait $FRONT_PID 2>/dev/null
pout=$TEST_TMP/peer.out
peer_bg "$pout" recv-udp 7000 5 30
wait_line "$pout" '^# listening' 10
netfront_bg "$out" "$guest" $DEV connect udp 7000 200 5 wait-file "$TEST_TMP/go" close
wait $PEER_PID || fail "peer: $(cat "$pout"; cat "$out")"
in_d ip -o link show "$tap" | grep -q "master br0" || fail "no new $tap on br0"
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "after: $(cat "$out")"

# Someone else's interface of that name.
in_d ip link add "$tap" type veth peer name nbother0 || fail "veth $tap"
netfront "$guest" $DEV --timeout 5 connect >"$out" 2>&1 && fail "connected over another $tap"
grep -q "an interface of that name exists" "$NB_LOG" || fail "no error: $(tail -3 "$NB_LOG")"
in_d ip -d link show "$tap" | grep -q veth || fail "$tap was taken over"
netback_alive || fail "netback exited"
exit 0
