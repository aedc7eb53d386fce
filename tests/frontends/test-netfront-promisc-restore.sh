#!/usr/bin/env bash
# Promiscuous mode is restored on every new backend: while tcpdump holds the
# guest's interface promiscuous, the frontend asks the backend not to filter
# multicast (request-multicast-control=0, at connect and, with
# feature-dynamic-multicast-control, at once) and passes frames for other hosts,
# so the capture keeps seeing a multicast group nobody joined and unicast for
# another host across two recoveries; once tcpdump is gone, filtering is back
# (request-multicast-control=1, and a non-promiscuous capture sees neither).
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/net-functions.sh"
requires tcpdump xenstore-read
[ -x "$NETBACK" ] || skip "netback not built"
start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
in_s ip route add 224.0.0.0/4 dev vs0 || fail "multicast route"
in_s ip neigh add 10.0.0.99 lladdr 02:00:00:00:00:99 dev vs0 nud permanent || fail "neigh"
g=$(netfront_dom guest --deadline-ms 1000 -v)
d=$(netback_dom drv0)
vif_add "$g" "$d" $VIF
netback_go drv0 "$g" $VIF
touch "$TEST_TMP/go.guest"
guest_ip
wait_for 10 nf_live_n "$g" 0
expect_eq "filtering while not promiscuous" "$(nf_key "$g" request-multicast-control)" 1
send() { for _ in $(seq 1 18000); do [ -e "$TEST_TMP/stop" ] && break; echo m >/dev/udp/239.9.9.9/5000; echo u >/dev/udp/10.0.0.99/5000; sleep 0.05; done; }
in_s bash -c "$(declare -f send); TEST_TMP=$TEST_TMP; send" 2>/dev/null &
on_exit "touch $TEST_TMP/stop"

ip netns exec "$NS_G" timeout 300 tcpdump -l -n -e -i eth0 udp port 5000 >"$TEST_TMP/cap.out" 2>/dev/null &
tcpd=$!
on_exit "kill $tcpd 2>/dev/null"
mc() { grep -c '> 01:00:5e:09:09:09' "$TEST_TMP/cap.out"; }
uc() { grep -c '> 02:00:00:00:00:99' "$TEST_TMP/cap.out"; }
_grows() { [ "$(mc)" -gt "$1" ] && [ "$(uc)" -gt "$2" ]; }
_key_is() { [ "$(nf_key "$g" request-multicast-control)" = "$1" ]; }
wait_for 10 _key_is 0
wait_for 10 _grows 0 0
log "promiscuous: request-multicast-control=0; captured $(mc) multicast, $(uc) unicast for others"
cur=drv0
for i in 1 2; do
    m=$(mc) u=$(uc)
    d=$(replace_netback "$cur" "drv$i" "$g")
    cur=drv$i
    wait_for 20 nf_live_n "$g" "$i"
    expect_eq "recovery $i: request-multicast-control" "$(nf_key "$g" request-multicast-control)" 0
    wait_for 10 _grows "$m" "$u"
    log "recovery $i: captured $(mc) multicast, $(uc) unicast for others"
done
grep -q "multicast filter 0" "$TEST_TMP/drv2.log" || fail "the last netback filtered multicast for a promiscuous guest"
kill $tcpd
wait $tcpd 2>/dev/null
wait_for 10 _key_is 1
timeout 2 ip netns exec "$NS_G" tcpdump -p -l -n -e -i eth0 udp port 5000 >"$TEST_TMP/nop.out" 2>/dev/null
expect_eq "not promiscuous: frames of the unjoined group or for others" \
    "$(grep -c -e '> 01:00:5e:09:09:09' -e '> 02:00:00:00:00:99' "$TEST_TMP/nop.out")" 0
net_sanitizer_check
exit 0
