#!/usr/bin/env bash
# Multicast control (feature-multicast-control): with request-multicast-control
# set, only multicast frames to groups the frontend added (MCAST_ADD extra-info
# on a dummy tx request) reach it; unicast (ours and other hosts', flooded by
# the bridge, as a promiscuous capture needs) and broadcast always do. A group
# deleted (MCAST_DEL) is filtered again; adding a unicast address is refused
# (NETIF_RSP_ERROR). feature-dynamic-multicast-control: a frontend that sets
# request-multicast-control while connected is filtered from then on.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup
G1=01:00:5e:01:02:03 G2=01:00:5e:07:07:07 OTHER=02:00:00:00:00:77 BC=ff:ff:ff:ff:ff:ff
send_all() {
    peer send-raw vs0 $G1 7300 5 && peer send-raw vs0 $G2 7300 4 &&
        peer send-raw vs0 $OTHER 7300 3 && peer send-raw vs0 $BC 7300 2 || fail "peer send-raw"
}
out=$TEST_TMP/front.out
netfront_bg "$out" "$guest" $DEV --mcast-control connect mcast-add $G1 wait-file "$TEST_TMP/g1" \
    count-rx 1500 mcast-del $G1 wait-file "$TEST_TMP/g2" count-rx 1500 \
    mcast-add 00:11:22:33:44:55 -1 mcast-del $G2 close
wait_line "$out" "^ok: multicast add $G1" 20
send_all
touch "$TEST_TMP/g1"
wait_line "$out" "^ok: multicast del $G1" 20
send_all
touch "$TEST_TMP/g2"
wait $FRONT_PID || fail "frontend: $(cat "$out")"
cat "$out"
first=$(grep -m1 '^ok: rx' "$out") second=$(grep '^ok: rx' "$out" | sed -n 2p)
for want in "$G1=5" "$OTHER=3" "$BC=2"; do
    echo "$first" | grep -q "$want" || fail "filter on, $G1 listed: want $want in '$first'"
done
echo "$first" | grep -q "$G2" && fail "an unlisted group got through: '$first'"
echo "$second" | grep -qE "$G1|$G2" && fail "a deleted group got through: '$second'"
echo "$second" | grep -q "$OTHER=3" || fail "unicast to another host filtered: '$second'"
grep -q "ok: multicast add 00:11:22:33:44:55 -> status -1" "$out" || fail "unicast add accepted"
grep -q "multicast add 00:11:22:33:44:55 refused" "$NB_LOG" || fail "no log line for the refusal"
grep -qE "dropped: [0-9]+ too big, 13 multicast filtered" "$NB_LOG" ||
    fail "netback did not count 13 filtered frames: $(grep 'multicast filtered' "$NB_LOG")"

# Dynamic: connected without the filter, then the frontend asks for it.
out2=$TEST_TMP/front2.out
netfront_bg "$out2" "$guest" $DEV connect wait-file "$TEST_TMP/g3" count-rx 1500 \
    wait-file "$TEST_TMP/g4" count-rx 1500 close
wait_line "$out2" "^ok: connected" 20
send_all
touch "$TEST_TMP/g3"
wait_line "$out2" "^ok: rx" 20
as_dom "$guest" xenstore-write "$(vif_fe "$guest" $DEV)/request-multicast-control" 1 ||
    fail "writing request-multicast-control"
wait_line "$NB_LOG" "frontend turned the multicast filter on" 10
send_all
touch "$TEST_TMP/g4"
wait $FRONT_PID || fail "frontend: $(cat "$out2")"
cat "$out2"
first=$(grep -m1 '^ok: rx' "$out2") second=$(grep '^ok: rx' "$out2" | sed -n 2p)
echo "$first" | grep -q "$G2=4" || fail "no filter yet, but $G2 filtered: '$first'"
echo "$second" | grep -qE "$G1|$G2" && fail "filter asked for while connected, not applied: '$second'"
echo "$second" | grep -q "$BC=2" || fail "broadcast filtered: '$second'"
netback_alive || fail "netback exited"
exit 0
