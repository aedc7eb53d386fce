#!/usr/bin/env bash
# netback drops what Xen's vif-bridge antispoof rules would: a guest's frames
# with a source MAC other than its vif's, and, with the toolstack's "ip" key,
# IPv4 from an address not in it. The spoofed datagrams never reach the
# server behind the bridge; the honest ones do; each drop is logged, and the
# frontend is answered (NETIF_RSP_DROPPED), never hung.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup ip="$GUEST_IP 10.99.0.3"
# Spoofed first, to a port of their own: nothing may arrive there.
sout=$TEST_TMP/spoofed.out
peer_bg "$sout" recv-udp 7002 1 6
spid=$PEER_PID
wait_line "$sout" '^# listening' 10
# dropped: the test frontend says which answers were not OKAY.
spoof() {
    local out
    out=$(netfront "$guest" $DEV "$@" connect udp 7002 200 10 2>&1)
    echo "$out"
    grep -q 'error 0 dropped 10' <<<"$out" || fail "spoofed frames ($*) not answered DROPPED: $out"
}
spoof --src-mac 00:16:3e:de:ad:01
spoof --ip 10.99.0.77
if wait $spid; then
    fail "a spoofed datagram reached the server: $(cat "$sout")"
fi
grep -q 'dropped: a source MAC that is not the vif'"'"'s' "$NB_LOG" || fail "no drop logged for the MAC"
# The vif's own MAC and either of its addresses pass.
pout=$TEST_TMP/peer.out
peer_bg "$pout" recv-udp 7000 20 20
wait_line "$pout" '^# listening' 10
netfront "$guest" $DEV connect udp 7000 200 10 close || fail "the honest frontend"
netfront "$guest" $DEV --ip 10.99.0.3 connect udp 7000 200 10 close || fail "the second address"
wait $PEER_PID || fail "honest datagrams did not arrive: $(cat "$pout")"
# Each connection's totals, as netback logs them when it ends: both spoofing
# ones dropped all 10, the honest ones none.
expect_eq "connections that dropped 10 spoofed frames" \
    "$(grep -c '(10 refused or failed, 10 of them spoofed)' "$NB_LOG")" 2
expect_eq "connections that dropped none" "$(grep -c '(0 refused or failed, 0 of them spoofed)' "$NB_LOG")" 2
netback_alive || fail "netback exited"
exit 0
