#!/usr/bin/env bash
# TCP connections opened by a program in the guest *during* a long recovery
# (over 5 s: the driver domain crashes and shadowd waits its `restart-delay`
# of 6 s before starting the next one) wait for the network and succeed: none
# fails with EHOSTUNREACH ("No route to host"). The netfront keeps the
# carrier on through a recovery and holds the guest's tx, neighbour probes
# among it; a new neighbour entry still gives up after mcast_solicit probes,
# held or not (3 s by default), so the netfront raises the interface's probe
# budget while it recovers and puts the recorded values back after.
#   - through the recovery eth0 stays up (operstate), and the entries the
#     guest had resolved stay in its neighbour table
#   - four connects issued well into the outage (past the guest's own probe
#     budget of 2 s): IPv4 and IPv6, each to an address the guest had
#     resolved before the fault (cached) and to one it never had (uncached);
#     each must get the server's line
#   - the outage (crash to live again) is measured and must exceed 5 s
#   - the interface's neighbour settings (set to non-default values by the
#     guest before the fault) are exactly as the guest set them afterwards
#   - once they are back, a connect to an address nobody has fails within the
#     guest's own budget again (EHOSTUNREACH, not held for the recovery's)
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../dom0/dom0-functions.sh"
source "$(dirname "$0")/net-functions.sh"
requires jq xenstore-read socat
[ -x "$NETBACK" ] || skip "netback not built"
[ -x "$AGENT" ] || skip "understudy-agent not built"
RESTART_DELAY_S=6
start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
# IPv6 on, for this test, where it is used (net_ns turns it off everywhere).
in_s sysctl -qw net.ipv6.conf.vs0.disable_ipv6=0 || fail "IPv6 on vs0"
in_g sysctl -qw net.ipv6.conf.default.disable_ipv6=0 || fail "IPv6 in the guest"
in_s ip addr add 10.0.0.3/24 dev vs0 && in_s ip -6 addr add fd00::1/64 dev vs0 nodad &&
    in_s ip -6 addr add fd00::3/64 dev vs0 nodad || fail "server addresses"

sd_conf
net_sd_domain "restart-delay ${RESTART_DELAY_S}s" "restart-budget 8" "stable-after 1s"
sd_start
d=$(sd_wait_up drv)
net_sd_guest "$d"
in_g ip -6 addr add fd00::2/64 dev eth0 nodad || fail "guest IPv6 address"

# The guest's own neighbour settings, not the defaults, so that putting back
# "3" would not pass for putting back what was there (mcast_solicit is what
# the netfront raises; the others must not move).
NEIGH_KEYS="ipv4/neigh/eth0/mcast_solicit ipv4/neigh/eth0/ucast_solicit ipv4/neigh/eth0/mcast_resolicit
ipv6/neigh/eth0/mcast_solicit ipv6/neigh/eth0/ucast_solicit ipv6/neigh/eth0/mcast_resolicit"
neigh_values() {
    local k
    for k in $NEIGH_KEYS; do printf '%s=%s ' "${k%%/*}:${k##*/}" "$(in_g cat "/proc/sys/net/$k")"; done
}
in_g sh -c 'echo 2 >/proc/sys/net/ipv4/neigh/eth0/mcast_solicit &&
    echo 4 >/proc/sys/net/ipv6/neigh/eth0/mcast_solicit &&
    echo 5 >/proc/sys/net/ipv4/neigh/eth0/ucast_solicit &&
    echo 1 >/proc/sys/net/ipv4/neigh/eth0/mcast_resolicit &&
    echo 4 >/proc/sys/net/ipv6/neigh/eth0/ucast_solicit' || fail "guest neighbour settings"
before=$(neigh_values)
log "neighbour settings before: $before"

in_s timeout 300 socat TCP4-LISTEN:7000,reuseaddr,fork SYSTEM:"echo connected" &
on_exit "kill $! 2>/dev/null"
in_s timeout 300 socat TCP6-LISTEN:7000,reuseaddr,fork,ipv6only=1 SYSTEM:"echo connected" &
on_exit "kill $! 2>/dev/null"
# One connect: NAME ADDRESS (socat's) -> $TEST_TMP/conn.NAME: rc, ms, what came.
connect_to() {
    local t0 out rc
    t0=$(now_ms)
    out=$(in_g timeout 60 socat -T 30 -u "$2" - 2>&1)
    rc=$?
    echo "rc=$rc ms=$(($(now_ms) - t0)) out=$(echo "$out" | tr '\n' ' ')" >"$TEST_TMP/conn.$1"
}
_connects() { connect_to "$1" "$2" && grep -q "^rc=0 .*out=connected" "$TEST_TMP/conn.$1"; }
# Cached: resolved (and used) before the fault; the servers listening.
wait_for 10 _connects warm4 TCP4:10.0.0.1:7000
wait_for 10 _connects warm6 "TCP6:[fd00::1]:7000"
in_g ip neigh show dev eth0 | grep -q '^10.0.0.1 .*REACHABLE' || fail "10.0.0.1 not cached: $(in_g ip neigh show dev eth0)"
in_g ip neigh show dev eth0 | grep -q '^fd00::1 .*REACHABLE' || fail "fd00::1 not cached: $(in_g ip neigh show dev eth0)"
in_g ip neigh show dev eth0 | grep -qE '^(10.0.0.3|fd00::3) ' && fail "an uncached address is cached"

# The fault: the domain crashes; shadowd starts the next one after RESTART_DELAY_S.
# Its 2 s into the outage are past the guest's own budget (mcast_solicit 2
# at retrans_time 1 s) before the connects: had it not been raised, their
# resolutions would give up inside the outage.
net_crash_link_kept "$g" "$d"
t0=$T_CRASH
log "$(($(now_ms) - t0)) ms after the crash: recovering, eth0 up; neighbours: $(in_g ip neigh show dev eth0 | tr '\n' ';')"
log "neighbour settings during the recovery: $(neigh_values)"
pids=()
for c in "cached4 TCP4:10.0.0.1:7000" "uncached4 TCP4:10.0.0.3:7000" \
    "cached6 TCP6:[fd00::1]:7000" "uncached6 TCP6:[fd00::3]:7000"; do
    connect_to $c &
    pids+=($!)
done
t_conn=$(now_ms)
sleep 0.5
nf_recovering "$g" || fail "the recovery ended before the connects were under way ($(($(now_ms) - t0)) ms)"
wait_for 30 nf_live_n "$g" 1
outage=$(($(now_ms) - t0))
log "outage: $outage ms from the crash to live; connects issued $((t_conn - t0)) ms after the crash; frontend $(nf_key "$g" shadow/last-recovery)"
[ "$outage" -gt 5000 ] || fail "the outage lasted $outage ms, not over 5 s: the test proves nothing"
for p in "${pids[@]}"; do wait "$p"; done
bad=0
for c in cached4 uncached4 cached6 uncached6; do
    r=$(cat "$TEST_TMP/conn.$c" 2>/dev/null)
    log "connect $c during the recovery: $r"
    case $r in
    "rc=0 "*"out=connected ") ;;
    *) bad=$((bad + 1)) ;;
    esac
done
[ "$bad" -eq 0 ] || fail "$bad of 4 connects issued during a $outage ms recovery failed"
wait_for 10 sd_state_is drv up

# The guest's settings back exactly, a few seconds after the recovery.
_restored() { [ "$(neigh_values)" = "$before" ]; }
wait_for 15 _restored
log "neighbour settings after: $(neigh_values)"
log "netfront: $(grep -o 'neighbour probes.*' "$TEST_TMP/guest.log" | tr '\n' ';')"
grep -q 'neighbour probe budget' "$TEST_TMP/guest.log" && fail "the netfront: $(grep 'neighbour probe budget' "$TEST_TMP/guest.log")"
# And its own budget with them: an address nobody has fails as before.
connect_to nobody4 TCP4:10.0.0.9:7000
r=$(cat "$TEST_TMP/conn.nobody4")
log "connect to 10.0.0.9 (nobody) after the recovery: $r"
case $r in
"rc=1 "*"No route to host"*) ;;
*) fail "a connect to an address nobody has: $r (want No route to host)" ;;
esac
ms=${r#*ms=}
ms=${ms%% *}
[ "$ms" -lt 10000 ] || fail "No route to host only after $ms ms: the raised budget stayed"
expect_check_clean
net_sanitizer_check
exit 0
