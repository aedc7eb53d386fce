#!/usr/bin/env bash
# The shadow netfront survives its driver domain being destroyed while an HTTP
# download runs through it: a stand-in toolstack (net-functions.sh) starts a new
# driver domain with a new netback, rewires the frontend dir in place and bumps
# shadow/generation. The interface stays (same name, index, address, route), the
# download completes with the right checksum, and each recovery is published.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/net-functions.sh"
requires curl busybox sha256sum xenstore-read
[ -x "$NETBACK" ] || skip "netback not built"
start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
g=$(netfront_dom guest --deadline-ms 1000)
d=$(netback_dom drv0)
vif_add "$g" "$d" $VIF
netback_go drv0 "$g" $VIF
touch "$TEST_TMP/go.guest"
guest_ip
wait_for 10 nf_live_n "$g" 0
idx=$(in_g cat /sys/class/net/eth0/ifindex)

mkdir -p "$TEST_TMP/www"
head -c 48M /dev/urandom >"$TEST_TMP/www/blob"
want=$(sha256sum <"$TEST_TMP/www/blob" | cut -d' ' -f1)
in_s timeout 900 busybox httpd -f -p 10.0.0.1:8080 -h "$TEST_TMP/www" &
on_exit "kill $! 2>/dev/null"
wait_for 10 in_g curl -s -o /dev/null http://10.0.0.1:8080/
# A slow download, so that it spans the faults.
in_g curl -s --limit-rate 6M --max-time 120 -o "$TEST_TMP/got" http://10.0.0.1:8080/blob &
cpid=$!
cur=drv0
for i in 1 2 3; do
    sleep 1.5
    kill -0 $cpid 2>/dev/null || fail "the download ended before fault $i"
    d=$(replace_netback "$cur" "drv$i" "$g")
    cur=drv$i
    wait_for 20 nf_live_n "$g" "$i"
    log "fault $i: '$(nf_key "$g" shadow/report)'; $(nf_key "$g" shadow/last-recovery)"
done
wait $cpid || fail "curl failed (exit $?)"
expect_eq "sha256 of the download" "$(sha256sum <"$TEST_TMP/got" | cut -d' ' -f1)" "$want"
expect_eq "interface index" "$(in_g cat /sys/class/net/eth0/ifindex)" "$idx"
in_g ip -4 addr show eth0 | grep -q 10.0.0.2/24 || fail "the address is gone"
in_g ip route show | grep -q '10.0.0.0/24 dev eth0' || fail "the route is gone"
expect_eq "recoveries" "$(nf_key "$g" shadow/recoveries)" 3
"$XENSIM" info guest | grep -q state=running || fail "the frontend died"
# A clean stop: SIGTERM closes the device (state Closed), removes the TAP, exits 0
# (and LeakSanitizer has its say).
kill -TERM "$("$XENSIM" info guest | sed -n 's/^pid=//p')"
"$XENSIM" wait guest --until shutdown --timeout 10 >/dev/null || fail "the frontend did not stop on SIGTERM"
"$XENSIM" info guest | grep -q shutdown_reason=poweroff || fail "the frontend exited badly: $("$XENSIM" info guest | tr '\n' ' ')"
expect_eq "frontend state after SIGTERM" "$(nf_key "$g" state)" 6
in_g ip link show eth0 >/dev/null 2>&1 && fail "eth0 is still there"
net_sanitizer_check
exit 0
