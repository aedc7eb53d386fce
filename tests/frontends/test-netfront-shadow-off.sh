#!/usr/bin/env bash
# --shadow off is a plain netfront: detection and reconnection still run, but the
# configuration is not restored. The guest joins a multicast group on the first
# backend (netback filters multicast, request-multicast-control=1) and its traffic
# arrives; after the driver domain is replaced the interface reconnects (same
# ifindex, traffic flows, a group joined now is forwarded to the new backend) but
# the new netback was never told about the group joined before, so that group's
# traffic no longer arrives. test-netfront-config-restore.sh is the same with the
# shadow on (the group keeps arriving).
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/net-functions.sh"
requires curl busybox socat xenstore-read
[ -x "$NETBACK" ] || skip "netback not built"
start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
in_s ip route add 224.0.0.0/4 dev vs0 || fail "multicast route"
g=$(netfront_dom guest --deadline-ms 1000 --shadow off -v)
d=$(netback_dom drv0)
vif_add "$g" "$d" $VIF
netback_go drv0 "$g" $VIF
touch "$TEST_TMP/go.guest"
guest_ip
wait_for 10 nf_live_n "$g" 0
expect_eq "request-multicast-control" "$(nf_key "$g" request-multicast-control)" 1
grep -q "shadow off" "$TEST_TMP/guest.log" || fail "the netfront does not say the shadow is off"
idx=$(in_g cat /sys/class/net/eth0/ifindex)

mkdir -p "$TEST_TMP/www"
echo hello >"$TEST_TMP/www/hello"
in_s timeout 300 busybox httpd -f -p 10.0.0.1:8080 -h "$TEST_TMP/www" &
on_exit "kill $! 2>/dev/null"

# recv GROUP PORT FILE: join GROUP on the guest's address, append what arrives on
# PORT to FILE.
recv() {
    in_g timeout 300 socat -u UDP4-RECV:"$2",ip-add-membership="$1":10.0.0.2 \
        OPEN:"$3",creat,append &
    on_exit "kill $! 2>/dev/null"
}
# The server sends to both groups every 50 ms.
send() {
    for _ in $(seq 1 6000); do
        [ -e "$TEST_TMP/stop" ] && break
        echo a >/dev/udp/239.1.2.3/5000
        echo b >/dev/udp/239.1.2.4/5001
        sleep 0.05
    done
}
in_s bash -c "$(declare -f send); TEST_TMP=$TEST_TMP; send" 2>/dev/null &
on_exit "touch $TEST_TMP/stop"
count() { wc -l <"$1" 2>/dev/null || echo 0; }
_more() { [ "$(count "$1")" -gt "$2" ]; }

recv 239.1.2.3 5000 "$TEST_TMP/before.out"
wait_for 10 _more "$TEST_TMP/before.out" 3
log "first backend: the group joined gets through ($(count "$TEST_TMP/before.out") datagrams)"

d=$(replace_netback drv0 drv1 "$g")
wait_for 20 nf_live_n "$g" 1
expect_eq "ifindex after the recovery" "$(in_g cat /sys/class/net/eth0/ifindex)" "$idx"
wait_for 10 in_g curl -s --max-time 5 -o "$TEST_TMP/got" http://10.0.0.1:8080/hello
expect_eq "a download after the recovery" "$(cat "$TEST_TMP/got")" hello
grep -q "shadow off: .* not restored" "$TEST_TMP/guest.log" ||
    fail "the netfront did not log the reconnection without restore"
# A group joined now reaches the new backend: multicast control itself works.
recv 239.1.2.4 5001 "$TEST_TMP/after.out"
wait_for 10 _more "$TEST_TMP/after.out" 3
# The one joined before: the new netback filters it (nobody restored it).
n=$(count "$TEST_TMP/before.out")
sleep 2
expect_eq "datagrams of the group joined before the recovery, in 2 s after it" \
    "$(($(count "$TEST_TMP/before.out") - n))" 0
log "after the recovery: the new group gets through ($(count "$TEST_TMP/after.out")), the old one not"
net_sanitizer_check
exit 0
