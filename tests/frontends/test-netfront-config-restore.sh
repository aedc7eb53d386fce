#!/usr/bin/env bash
# The shadow restores the interface configuration the guest set on a new backend:
# the multicast group it joined is sent to the new netback (MCAST_ADD extra-info:
# netback filters multicast, request-multicast-control=1), so the group's traffic
# arrives after each recovery while a group it did not join stays filtered; a
# jumbo MTU (9000) keeps working (frames over a page, in several slots, both
# ways), and the interface keeps its MTU.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/net-functions.sh"
requires curl busybox socat tcpdump sha256sum xenstore-read
[ -x "$NETBACK" ] || skip "netback not built"
start_sim
VIF_BE_KEYS=(mtu=9000)
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
in_d ip link set vd0 mtu 9000 && in_s ip link set vs0 mtu 9000 || fail "jumbo veth"
in_s ip route add 224.0.0.0/4 dev vs0 || fail "multicast route"
# Without offloads: the jumbo frames are MTU-sized frames in several slots, not GSO.
g=$(netfront_dom guest --deadline-ms 1000 --offloads off -v)
d=$(netback_dom drv0)
vif_add "$g" "$d" $VIF mtu=9000
netback_go drv0 "$g" $VIF
touch "$TEST_TMP/go.guest"
guest_ip
in_g ip link set eth0 mtu 9000 || fail "guest mtu"
wait_for 10 nf_live_n "$g" 0
expect_eq "request-multicast-control" "$(nf_key "$g" request-multicast-control)" 1

mkdir -p "$TEST_TMP/www"
head -c 8M /dev/urandom >"$TEST_TMP/www/blob"
want=$(sha256sum <"$TEST_TMP/www/blob" | cut -d' ' -f1)
in_s timeout 900 busybox httpd -f -p 10.0.0.1:8080 -h "$TEST_TMP/www" &
on_exit "kill $! 2>/dev/null"
# The guest joins 239.1.2.3; the server sends to it and to 239.9.9.9, every 50 ms.
in_g timeout 900 socat -u UDP4-RECV:5000,ip-add-membership=239.1.2.3:10.0.0.2 OPEN:"$TEST_TMP/joined.out",creat,append &
on_exit "kill $! 2>/dev/null"
send() { for _ in $(seq 1 18000); do [ -e "$TEST_TMP/stop" ] && break; echo a >/dev/udp/239.1.2.3/5000; echo b >/dev/udp/239.9.9.9/5000; sleep 0.05; done; }
in_s bash -c "$(declare -f send); TEST_TMP=$TEST_TMP; send" 2>/dev/null &
on_exit "touch $TEST_TMP/stop"
joined() { wc -l <"$TEST_TMP/joined.out" 2>/dev/null || echo 0; }
_joined_gt() { [ "$(joined)" -gt "$1" ]; }

check_round() {
    local what=$1 n
    n=$(joined)
    wait_for 10 _joined_gt "$n"
    timeout 2 ip netns exec "$NS_G" tcpdump -p -l -n -e -i eth0 ether dst 01:00:5e:09:09:09 \
        >"$TEST_TMP/unjoined.out" 2>/dev/null
    expect_eq "$what: frames of a group not joined" "$(grep -c '> 01:00:5e:09:09:09' "$TEST_TMP/unjoined.out")" 0
    # A jumbo download: frames over 8000 bytes arrive, the checksum is right.
    ip netns exec "$NS_G" timeout 20 tcpdump -p -c 1 -n -i eth0 greater 8000 >"$TEST_TMP/big.out" 2>/dev/null &
    local tp=$!
    sleep 0.5
    in_g curl -s --max-time 60 -o "$TEST_TMP/got" http://10.0.0.1:8080/blob || fail "$what: curl"
    expect_eq "$what: sha256" "$(sha256sum <"$TEST_TMP/got" | cut -d' ' -f1)" "$want"
    wait $tp || fail "$what: no frame over 8000 bytes seen"
    expect_eq "$what: guest MTU" "$(in_g cat /sys/class/net/eth0/mtu)" 9000
    log "$what: multicast group joined: $(joined) datagrams so far; jumbo frames; checksum ok"
}
check_round "first backend"
cur=drv0
for i in 1 2; do
    d=$(replace_netback "$cur" "drv$i" "$g")
    cur=drv$i
    wait_for 20 nf_live_n "$g" "$i"
    check_round "after recovery $i"
done
grep -q "multicast filter on" "$TEST_TMP/drv2.log" || grep -q "multicast filter 1" "$TEST_TMP/drv2.log" ||
    fail "the last netback did not filter multicast"
net_sanitizer_check
exit 0
