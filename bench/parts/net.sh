#!/usr/bin/env bash
# bench/parts/net.sh - the network class: throughput and request/response latency
# through our path (the shadow netfront's TAP in a guest namespace -> netback in a
# driver domain -> bridge -> veth -> a server namespace) against two baselines in
# the same two namespaces, measured in this run: the same path with a second
# netfront running --shadow off (its own guest domain and TAP, eth1, on the same
# netback domain and bridge; a subnet of its own), and a plain veth pair. The
# three are measured in turn, in NET_BENCH_ROUNDS rounds (2) of NET_BENCH_SECONDS
# (3) each, the order rotated every round; throughput is the best round's, latency
# percentiles are over every round's samples. Recovery time (driver domain
# crashed -> first datagram through again), shadowd doing all of the recovery,
# for both netfronts at once (one probe each).
#
# Rows: net.tcp.tx / net.tcp.rx (iperf3, Mbit/s, guest sending / receiving),
# net.udp.rtt (netprobe echo every 2 ms, us p50/p99), each once with baseline
# "veth" and once with "shadow-off"; net.recovery (ms p50/p99, NET_BENCH_CRASHES
# crashes, default 20), once alone and once with baseline "shadow-off". Run by
# bench/run-bench with BUILD, RES, TMP and XENSIM exported; needs root.
set -euo pipefail
N=${NET_BENCH_CRASHES:-20}
SECS=${NET_BENCH_SECONDS:-3}
ROUNDS=${NET_BENCH_ROUNDS:-2}
SHADOWD=$BUILD/bin/shadowd SHADOWCTL=$BUILD/bin/shadowctl AGENT=$BUILD/bin/understudy-agent
NETBACK=$BUILD/bin/netback NETFRONT=$BUILD/bin/understudy-netfront
XSDEV=$BUILD/tests/dom0/xsdev PROBE=$BUILD/tests/frontends/netprobe
for f in "$SHADOWD" "$SHADOWCTL" "$AGENT" "$NETBACK" "$NETFRONT" "$XSDEV" "$PROBE"; do
    [ -x "$f" ] || { echo "net bench: $f not built"; exit 1; }
done
for c in ip iperf3 jq xenstore-read; do
    command -v "$c" >/dev/null || { echo "net bench: $c not installed"; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "net bench: needs root (network namespaces); skipped"; exit 0; }
W=$TMP/net-bench
mkdir -p "$W"
export XENSIM_DIR=$W/sim
G=nfbg$$ D=nfbd$$ S=nfbs$$
SD_PID=
cleanup() {
    [ -z "$SD_PID" ] || kill -TERM "$SD_PID" 2>/dev/null || true
    "$XENSIM" stop >/dev/null 2>&1 || true
    local ns
    for ns in "$G" "$D" "$S"; do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || true
    done
}
trap cleanup EXIT
die() {
    echo "net bench: $*" >&2
    tail -n 15 "$W"/*.log >&2 2>/dev/null || true
    exit 1
}
until_ok() {
    local to=$1 i
    shift
    for ((i = 0; i < to * 50; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.02; done
    return 1
}
in_g() { ip netns exec "$G" "$@"; }
in_d() { ip netns exec "$D" "$@"; }
in_s() { ip netns exec "$S" "$@"; }

echo "== net: shadow netfront + netback (bridge, veth) vs --shadow off and a plain veth pair between the same namespaces"
ip netns add "$G" && ip netns add "$D" && ip netns add "$S"
for ns in "$G" "$D" "$S"; do
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip netns exec "$ns" ip link set lo up
done
# Two TAPs on one bridge in the guest: each answers ARP only for its own address.
in_g sysctl -qw net.ipv4.conf.all.arp_ignore=1 net.ipv4.conf.all.arp_announce=2
in_d ip link add br0 type bridge && in_d ip link set br0 up
in_d ip link add vd0 type veth peer name vs0 && in_d ip link set vs0 netns "$S"
in_d ip link set vd0 master br0 && in_d ip link set vd0 up
in_s ip addr add 10.0.0.1/24 dev vs0 && in_s ip addr add 10.2.0.1/24 dev vs0
in_s ip link set vs0 up
# The baseline: a veth pair straight from the guest namespace to the server's.
in_g ip link add bg0 type veth peer name bs0 && in_g ip link set bs0 netns "$S"
in_g ip addr add 10.1.0.2/24 dev bg0 && in_g ip link set bg0 up
in_s ip addr add 10.1.0.1/24 dev bs0 && in_s ip link set bs0 up

"$XENSIM" start >/dev/null
eval "$("$XENSIM" env 0)"
cat >"$W/shadowd.conf" <<CONF
state-dir $W/state
run-dir $W/run
xensim-dir $XENSIM_DIR
domain drv {
    driver xensim
    command ip netns exec $D $AGENT --handler vif=$NETBACK --heartbeat-ms 100
    log $W/drv.log
    heartbeat-timeout 1s
    boot-timeout 10s
    restart-budget 64
    stable-after 1s
    backoff-initial 100ms
    backoff-max 400ms
    reconnect-timeout 10s
}
CONF
"$SHADOWD" -c "$W/shadowd.conf" >"$W/shadowd.log" 2>&1 &
SD_PID=$!
sdq() { "$SHADOWCTL" -s "$W/run/shadowd.sock" status --json | jq -r ".domains[0] | $1"; }
_sd_up() { [ "$(sdq '"\(.state) \(.heartbeat.seen)"')" = "up true" ]; }
until_ok 20 _sd_up || die "shadowd did not bring the driver domain up"
d=$(xenstore-read /local/domain/0/data/understudy/shadowd/drv/domid)
# guest NAME IFNAME MAC ARGS...: a guest domain whose netfront makes IFNAME; prints
# its frontend dir.
guest() {
    local name=$1 ifn=$2 mac=$3 g fe be
    shift 3
    g=$("$XENSIM" create --name "$name" --log "$W/$name.log" -- ip netns exec "$G" sh -c \
        'while [ ! -e "$1" ]; do sleep 0.02; done; shift; exec "$@"' sh "$W/go" \
        "$NETFRONT" --device device/vif/0 --ifname "$ifn" --deadline-ms 1000 "$@")
    fe=/local/domain/$g/device/vif/0 be=/local/domain/$d/backend/vif/$g/0
    "$XSDEV" "$fe" "n$g,r$d" backend="$be" backend-id="$d" state=1 handle=0 mac="$mac" \
        shadow/generation=0
    "$XSDEV" "$be" "n$d,r$g" frontend="$fe" frontend-id="$g" online=1 state=1 handle=0 \
        mac="$mac" bridge=br0 type=vif
    echo "$fe"
}
fe=$(guest guest eth0 00:16:3e:4e:46:01)
fe_off=$(guest guest-off eth1 00:16:3e:4e:46:02 --shadow off)
touch "$W/go"
_live() { # FE N: live with at least N recoveries
    [ "$(xenstore-read "$1/shadow/state" 2>/dev/null)" = live ] &&
        [ "$(xenstore-read "$1/shadow/recoveries" 2>/dev/null)" -ge "$2" ]
}
for f in "$fe" "$fe_off"; do until_ok 20 _live "$f" 0 || die "frontend $f did not connect"; done
for i in 0 2; do
    ifn=eth$((i / 2))
    until_ok 10 in_g ip link show "$ifn" || die "no $ifn in the guest"
    in_g ip addr add 10.$i.0.2/24 dev "$ifn" && in_g ip link set "$ifn" up
    until_ok 10 in_g ping -c1 -W1 10.$i.0.1 2>/dev/null ||
        until_ok 10 in_g busybox ping -c 1 -W 1 10.$i.0.1 || die "no connectivity through $ifn"
done

in_s iperf3 -s -D --pidfile "$W/iperf3.pid" >/dev/null
(in_s "$PROBE" server 7001 600 &) # not a job of this shell: its death is not reported
until_ok 10 in_g iperf3 -c 10.1.0.1 -t 1 || die "iperf3 server not answering"

json() { jq -cn "$@" >>"$RES"; }
# The three paths by server address: shadow on (eth0), shadow off (eth1), veth.
declare -A ADDR=([on]=10.0.0.1 [off]=10.2.0.1 [veth]=10.1.0.1)
ORDER=(on off veth)
# order R: the configurations in round R's order (rotated each round).
order() { local k; for k in 0 1 2; do echo "${ORDER[$(((k + $1) % 3))]}"; done; }
iperf() { in_g iperf3 -c "$1" -t "$SECS" -J $2 | jq '.end.sum_received.bits_per_second / 1e6'; }
# row BENCH METRIC VALUE BASELINE BASELINE_VALUE [JQ-EXTRA]: ratio is value/baseline.
row() {
    json --arg b "$1" --arg m "$2" --argjson v "$3" --arg bl "$4" --argjson bv "$5" \
        "{bench: \$b, metric: \$m, value: (\$v*10|round/10), baseline: \$bl, baseline_value: (\$bv*10|round/10), ratio: ((\$v/\$bv)*1000|round/1000)} ${6:-}"
}
for dir in tx rx; do
    flag=; [ $dir = rx ] && flag=-R
    declare -A best=([on]=0 [off]=0 [veth]=0)
    for ((r = 0; r < ROUNDS; r++)); do
        for c in $(order $r); do
            v=$(iperf "${ADDR[$c]}" "$flag")
            awk -v a="$v" -v b="${best[$c]}" 'BEGIN {exit !(a > b)}' && best[$c]=$v
        done
    done
    row "net.tcp.$dir" Mbit/s "${best[on]}" veth "${best[veth]}"
    row "net.tcp.$dir" Mbit/s "${best[on]}" shadow-off "${best[off]}"
    printf "net.tcp.%s: %.1f Mbit/s, shadow off %.1f Mbit/s, veth %.1f Mbit/s\n" "$dir" \
        "${best[on]}" "${best[off]}" "${best[veth]}"
done

# p: the p-th percentile (0..100) of the numbers on stdin.
pct() { sort -n | awk -v p="$1" '{a[NR]=$1} END {if (NR==0) {print 0; exit} i=int((NR-1)*p/100)+1; print a[i]}'; }
for c in on off veth; do : >"$W/rtt.$c"; done
for ((r = 0; r < ROUNDS; r++)); do
    for c in $(order $r); do
        in_g "$PROBE" client "${ADDR[$c]}" 7001 2000 "$SECS" |
            awk '$1 != "PROBE-DONE" {printf "%.1f\n", ($2-$1)/1000}' >>"$W/rtt.$c"
    done
done
declare -A p50 p99
for c in on off veth; do
    [ -s "$W/rtt.$c" ] || die "no echo through the $c path"
    p50[$c]=$(pct 50 <"$W/rtt.$c") p99[$c]=$(pct 99 <"$W/rtt.$c")
done
for c in veth off; do
    bl=$c; [ $c = off ] && bl=shadow-off
    row net.udp.rtt us "${p50[on]}" "$bl" "${p50[$c]}" \
        "+ {p50: ${p50[on]}, p99: ${p99[on]}, baseline_p99: ${p99[$c]}}"
done
echo "net.udp.rtt: p50 ${p50[on]} us p99 ${p99[on]} us; shadow off p50 ${p50[off]} us p99 ${p99[off]} us; veth p50 ${p50[veth]} us p99 ${p99[veth]} us"

# Recovery: crash the driver domain N times while a probe runs every 2 ms through
# each netfront; for each crash, the end of the outage after it: the first echo
# received after a silence of more than 20 ms that starts after the crash (what
# the dying backend still passed on is not recovery), minus the crash time.
# Line-buffered, so that stopping them after the last crash loses no echo; the
# duration is only their bound.
in_g stdbuf -oL "$PROBE" client 10.0.0.1 7001 2000 $((N * 5 + 20)) >"$W/probe.on" &
pon=$!
in_g stdbuf -oL "$PROBE" client 10.2.0.1 7001 2000 $((N * 5 + 20)) >"$W/probe.off" &
poff=$!
sleep 1
: >"$W/kills"
for i in $(seq 1 "$N"); do
    d=$(xenstore-read /local/domain/0/data/understudy/shadowd/drv/domid)
    date +%s%N >>"$W/kills"
    "$XENSIM" crash "$d" >/dev/null
    for f in "$fe" "$fe_off"; do
        until_ok 30 _live "$f" "$i" || die "crash $i: frontend $f did not recover"
    done
    until_ok 10 _sd_up || die "crash $i: shadowd did not bring a domain up"
    sleep 1.5
done
kill -TERM $pon $poff 2>/dev/null || true
wait $pon $poff 2>/dev/null || true
outages() { # PROBE-OUTPUT: one recovery time (ms) per crash
    while read -r k; do
        awk -v k="$k" '$1 != "PROBE-DONE" && $2 > k {
            if ($2 - prev > 20e6 && prev) { printf "%.1f\n", ($2 - k) / 1e6; exit }
            prev = $2 } $1 != "PROBE-DONE" && $2 <= k { prev = k }' "$1"
    done <"$W/kills"
}
outages "$W/probe.on" >"$W/recovery.on"
outages "$W/probe.off" >"$W/recovery.off"
for c in on off; do
    [ "$(wc -l <"$W/recovery.$c")" -eq "$N" ] ||
        die "shadow $c: a crash with no outage or no datagram through after it"
done
r50=$(pct 50 <"$W/recovery.on") r99=$(pct 99 <"$W/recovery.on")
o50=$(pct 50 <"$W/recovery.off") o99=$(pct 99 <"$W/recovery.off")
json --argjson v "$r50" --argjson v99 "$r99" --argjson n "$N" \
    '{bench: "net.recovery", metric: "ms", value: $v, p50: $v, p99: $v99, crashes: $n}'
row net.recovery ms "$r50" shadow-off "$o50" \
    "+ {p50: $r50, p99: $r99, baseline_p99: $o99, crashes: $N}"
echo "net.recovery (crash -> first datagram through): p50 $r50 ms p99 $r99 ms; shadow off p50 $o50 ms p99 $o99 ms; over $N crashes"
