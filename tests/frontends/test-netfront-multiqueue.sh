#!/usr/bin/env bash
# Two queues: the frontend asks for them (multi-queue-num-queues=2, queue-0/ and
# queue-1/ with their own rings and event channels) over a two-queue TAP, traffic
# flows through both (parallel TCP streams, a download with its checksum), and
# after a recovery the new backend gets two queues again.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/net-functions.sh"
requires curl busybox sha256sum xenstore-read iperf3
[ -x "$NETBACK" ] || skip "netback not built"
start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
g=$(netfront_dom guest --deadline-ms 1000 --queues 2)
d=$(netback_dom drv0)
vif_add "$g" "$d" $VIF
netback_go drv0 "$g" $VIF
touch "$TEST_TMP/go.guest"
guest_ip
wait_for 10 nf_live_n "$g" 0
mkdir -p "$TEST_TMP/www"
head -c 16M /dev/urandom >"$TEST_TMP/www/blob"
want=$(sha256sum <"$TEST_TMP/www/blob" | cut -d' ' -f1)
in_s timeout 900 busybox httpd -f -p 10.0.0.1:8080 -h "$TEST_TMP/www" &
on_exit "kill $! 2>/dev/null"

check_queues() {
    local what=$1 q
    expect_eq "$what: multi-queue-num-queues" "$(nf_key "$g" multi-queue-num-queues)" 2
    for q in 0 1; do
        [ -n "$(nf_key "$g" queue-$q/tx-ring-ref)" ] && [ -n "$(nf_key "$g" queue-$q/rx-ring-ref)" ] &&
            [ -n "$(nf_key "$g" queue-$q/event-channel)" ] || fail "$what: queue-$q keys missing"
    done
    [ -z "$(nf_key "$g" tx-ring-ref)" ] || fail "$what: a single-queue tx-ring-ref beside the queues"
    grep -q "connected to .*: 2 queue(s)" "$TEST_TMP/$2.log" || fail "$what: netback did not connect 2 queues"
    in_s timeout 60 iperf3 -s -1 >/dev/null 2>&1 &
    local ip=$!
    wait_for 10 sh -c "ip netns exec $NS_S ss -ltn | grep -q :5201"
    in_g timeout 60 iperf3 -c 10.0.0.1 -t 2 -P 4 >"$TEST_TMP/iperf.out" 2>&1 || fail "$what: iperf3: $(tail -3 "$TEST_TMP/iperf.out")"
    wait $ip
    in_g curl -s --max-time 60 -o "$TEST_TMP/got" http://10.0.0.1:8080/blob || fail "$what: curl"
    expect_eq "$what: sha256" "$(sha256sum <"$TEST_TMP/got" | cut -d' ' -f1)" "$want"
    log "$what: 2 queues; $(grep SUM "$TEST_TMP/iperf.out" | tail -1 | tr -s ' ')"
}
check_queues "first backend" drv0
d=$(replace_netback drv0 drv1 "$g")
wait_for 20 nf_live_n "$g" 1
check_queues "after a recovery" drv1
net_sanitizer_check
exit 0
