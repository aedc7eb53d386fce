#!/usr/bin/env bash
# The network class end to end, with shadowd doing all detection, restart and
# rewiring: netback under the agent in a driver domain (its own network namespace,
# bridged to a veth whose other end is a server namespace), the shadow netfront in
# a guest (a TAP in the guest namespace). While the driver domain is killed
# NET_KILLS times (crash and destroy, alternately):
#   - a 256 MiB HTTP download (busybox httpd on the server, curl in the guest)
#     finishes with the right sha256;
#   - an interactive session (one small message every 20 ms over TCP) never
#     disconnects;
#   - tcpdump in promiscuous mode on the guest interface keeps capturing traffic
#     addressed to another host after every recovery (the frontend's receive filter
#     follows the recorded promiscuous mode), while a non-promiscuous capture
#     before the faults sees none of it.
# NET_MIB and NET_KILLS make it smaller for a quick run.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../dom0/dom0-functions.sh"
source "$(dirname "$0")/../frontends/net-functions.sh"
requires jq xenstore-read curl busybox socat tcpdump sha256sum
[ -x "$NETBACK" ] || skip "netback not built"
[ -x "$AGENT" ] || skip "understudy-agent not built"
MIB=${NET_MIB:-256}
KILLS=${NET_KILLS:-10}
start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
sd_conf
net_sd_domain "restart-budget 64" "restart-window 10m" "stable-after 1s"
sd_start
d=$(sd_wait_up drv)
net_sd_guest "$d"
idx=$(in_g cat /sys/class/net/eth0/ifindex)

# The server: a file over HTTP, an echo service, and a stream of datagrams to
# another host (10.0.0.99 at a MAC on no bridge port: the bridge floods it).
mkdir -p "$TEST_TMP/www"
head -c "${MIB}M" /dev/urandom >"$TEST_TMP/www/blob"
want=$(sha256sum <"$TEST_TMP/www/blob" | cut -d' ' -f1)
in_s timeout 900 busybox httpd -f -p 10.0.0.1:8080 -h "$TEST_TMP/www" &
on_exit "kill $! 2>/dev/null"
in_s timeout 900 socat TCP-LISTEN:7000,reuseaddr,fork EXEC:cat &
on_exit "kill $! 2>/dev/null"
in_s ip neigh add 10.0.0.99 lladdr 02:00:00:00:00:99 dev vs0 nud permanent || fail "neigh"
other() { for _ in $(seq 1 18000); do [ -e "$TEST_TMP/stop" ] && break; echo x >/dev/udp/10.0.0.99/9999; sleep 0.05; done; }
in_s bash -c "$(declare -f other); TEST_TMP=$TEST_TMP; other" 2>/dev/null &
on_exit "touch $TEST_TMP/stop"
wait_for 10 in_g curl -s -o /dev/null http://10.0.0.1:8080/

# Negative control: without promiscuous mode, none of it reaches the guest.
timeout 2 ip netns exec "$NS_G" tcpdump -p -l -n -e -i eth0 ether dst 02:00:00:00:00:99 \
    >"$TEST_TMP/nopromisc.out" 2>/dev/null
expect_eq "frames for another host without promisc" "$(grep -c '> 02:00:00:00:00:99' "$TEST_TMP/nopromisc.out")" 0
ip netns exec "$NS_G" tcpdump -l -n -e -i eth0 ether dst 02:00:00:00:00:99 \
    >"$TEST_TMP/capture.out" 2>"$TEST_TMP/tcpdump.err" &
tcpd=$!
on_exit "kill $tcpd 2>/dev/null"
captured() { grep -c '> 02:00:00:00:00:99' "$TEST_TMP/capture.out"; }
_captured_gt() { [ "$(captured)" -gt "$1" ]; }
wait_for 10 _captured_gt 0
[ $(($(in_g cat /sys/class/net/eth0/flags) & 0x100)) -ne 0 ] || fail "tcpdump did not make eth0 promiscuous"

ip netns exec "$NS_G" "$TOP/tests/frontends/net-session.sh" 10.0.0.1 7000 \
    "$TEST_TMP/stop.session" "$TEST_TMP/session.out" &
spid=$!
wait_for 10 grep -q SESSION-PROGRESS "$TEST_TMP/session.out"
# Rate-limited so that the download spans every fault.
rate=$(( MIB * 1024 / (KILLS * 3 + 6) ))k
in_g curl -s --limit-rate "$rate" --max-time 600 -o "$TEST_TMP/got" http://10.0.0.1:8080/blob &
cpid=$!

for i in $(seq 1 "$KILLS"); do
    sleep 2
    kill -0 $cpid 2>/dev/null || fail "the download ended before fault $i"
    d=$(sd_domid drv)
    if [ $((i % 2)) -eq 1 ]; then "$XENSIM" crash "$d" >/dev/null; else "$XENSIM" destroy "$d" >/dev/null; fi
    wait_for 30 nf_live_n "$g" "$i"
    wait_for 10 sd_state_is drv up
    [ "$(sd_domid drv)" != "$d" ] || fail "fault $i: no new driver domain"
    c=$(captured)
    wait_for 10 _captured_gt "$c"
    grep -q SESSION-FAIL "$TEST_TMP/session.out" && fail "$(grep SESSION-FAIL "$TEST_TMP/session.out")"
    log "fault $i: frontend '$(nf_key "$g" shadow/report)' $(nf_key "$g" shadow/last-recovery); shadowd $(sdctl history --json | jq -c '.[-1] | {total_ms}'); captured $c+"
done
expect_check_clean
wait $cpid || fail "curl failed (exit $?)"
expect_eq "sha256 of the ${MIB} MiB download" "$(sha256sum <"$TEST_TMP/got" | cut -d' ' -f1)" "$want"
touch "$TEST_TMP/stop.session"
wait $spid || fail "the session: $(tail -1 "$TEST_TMP/session.out")"
grep -q '^SESSION-OK' "$TEST_TMP/session.out" || fail "the session: $(tail -1 "$TEST_TMP/session.out")"
log "session: $(tail -1 "$TEST_TMP/session.out")"
expect_eq "interface index" "$(in_g cat /sys/class/net/eth0/ifindex)" "$idx"
in_g ip -4 addr show eth0 | grep -q 10.0.0.2/24 || fail "the address is gone"
expect_eq "frontend recoveries" "$(nf_key "$g" shadow/recoveries)" "$KILLS"
expect_eq "shadowd recoveries" "$(sdctl history --json | jq '[.[] | select(.ok)] | length')" "$KILLS"
"$XENSIM" info guest | grep -q state=running || fail "the frontend died"
net_sanitizer_check
exit 0
