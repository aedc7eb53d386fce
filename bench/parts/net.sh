#!/usr/bin/env bash
# bench/parts/net.sh - the network class: throughput and request/response latency
# through our path (the shadow netfront's TAP in a guest namespace -> netback in a
# driver domain -> bridge -> veth -> a server namespace) against a plain veth pair
# between the same two namespaces, as ratios measured in this run; and recovery
# time (driver domain crashed -> first datagram through again) with shadowd doing
# all of the recovery.
#
# Rows: net.tcp.tx / net.tcp.rx (iperf3, Mbit/s, guest sending / receiving),
# net.udp.rtt (netprobe echo every 2 ms, us p50/p99), net.recovery (ms p50/p99,
# NET_BENCH_CRASHES crashes, default 20). Run by bench/run-bench with BUILD, RES,
# TMP and XENSIM exported; needs root (network namespaces).
set -euo pipefail
N=${NET_BENCH_CRASHES:-20}
SECS=${NET_BENCH_SECONDS:-5}
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

echo "== net: shadow netfront + netback (bridge, veth) vs a plain veth pair between the same namespaces"
ip netns add "$G" && ip netns add "$D" && ip netns add "$S"
for ns in "$G" "$D" "$S"; do
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip netns exec "$ns" ip link set lo up
done
in_d ip link add br0 type bridge && in_d ip link set br0 up
in_d ip link add vd0 type veth peer name vs0 && in_d ip link set vs0 netns "$S"
in_d ip link set vd0 master br0 && in_d ip link set vd0 up
in_s ip addr add 10.0.0.1/24 dev vs0 && in_s ip link set vs0 up
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
g=$("$XENSIM" create --name guest --log "$W/guest.log" -- ip netns exec "$G" sh -c \
    'while [ ! -e "$1" ]; do sleep 0.02; done; shift; exec "$@"' sh "$W/go" \
    "$NETFRONT" --device device/vif/0 --deadline-ms 1000)
MAC=00:16:3e:4e:46:01
fe=/local/domain/$g/device/vif/0 be=/local/domain/$d/backend/vif/$g/0
"$XSDEV" "$fe" "n$g,r$d" backend="$be" backend-id="$d" state=1 handle=0 mac=$MAC shadow/generation=0
"$XSDEV" "$be" "n$d,r$g" frontend="$fe" frontend-id="$g" online=1 state=1 handle=0 mac=$MAC \
    bridge=br0 type=vif
touch "$W/go"
fek() { xenstore-read "$fe/$1" 2>/dev/null; }
_live() { [ "$(fek shadow/state)" = live ] && [ "$(fek shadow/recoveries)" -ge "$1" ]; }
until_ok 20 _live 0 || die "the frontend did not connect"
until_ok 10 in_g ip link show eth0 || die "no eth0 in the guest"
in_g ip addr add 10.0.0.2/24 dev eth0 && in_g ip link set eth0 up
until_ok 10 in_g ping -c1 -W1 10.0.0.1 2>/dev/null || until_ok 10 in_g busybox ping -c 1 -W 1 10.0.0.1 ||
    die "no connectivity through the netfront"

in_s iperf3 -s -D --pidfile "$W/iperf3.pid" >/dev/null
(in_s "$PROBE" server 7001 600 &) # not a job of this shell: its death is not reported
until_ok 10 in_g iperf3 -c 10.1.0.1 -t 1 || die "iperf3 server not answering"

json() { jq -cn "$@" >>"$RES"; }
iperf() { in_g iperf3 -c "$1" -t "$SECS" -J $2 | jq '.end.sum_received.bits_per_second / 1e6'; }
for dir in tx rx; do
    flag=; [ $dir = rx ] && flag=-R
    ours=$(iperf 10.0.0.1 "$flag")
    base=$(iperf 10.1.0.1 "$flag")
    json --arg b "net.tcp.$dir" --argjson v "$ours" --argjson bv "$base" \
        '{bench: $b, metric: "Mbit/s", value: ($v*10|round/10), baseline: "veth", baseline_value: ($bv*10|round/10), ratio: (($v/$bv)*1000|round/1000)}'
    echo "net.tcp.$dir: $ours Mbit/s, veth $base Mbit/s"
done

# p: the p-th percentile (0..100) of the numbers on stdin.
pct() { sort -n | awk -v p="$1" '{a[NR]=$1} END {if (NR==0) {print 0; exit} i=int((NR-1)*p/100)+1; print a[i]}'; }
rtt() {
    in_g "$PROBE" client "$1" 7001 2000 "$SECS" | awk '$1 != "PROBE-DONE" {printf "%.1f\n", ($2-$1)/1000}' >"$W/rtt.$2"
}
rtt 10.0.0.1 ours
rtt 10.1.0.1 base
o50=$(pct 50 <"$W/rtt.ours") o99=$(pct 99 <"$W/rtt.ours")
b50=$(pct 50 <"$W/rtt.base") b99=$(pct 99 <"$W/rtt.base")
json --argjson v "$o50" --argjson v99 "$o99" --argjson bv "$b50" --argjson bv99 "$b99" \
    '{bench: "net.udp.rtt", metric: "us", value: $v, p50: $v, p99: $v99, baseline: "veth", baseline_value: $bv, baseline_p99: $bv99, ratio: (($v/$bv)*1000|round/1000)}'
echo "net.udp.rtt: p50 $o50 us p99 $o99 us; veth p50 $b50 us p99 $b99 us"

# Recovery: crash the driver domain N times while a probe runs every 2 ms; for each
# crash, the end of the outage after it: the first echo received after a silence of
# more than 20 ms that starts after the crash (what the dying backend still passed
# on is not recovery), minus the crash time.
in_g "$PROBE" client 10.0.0.1 7001 2000 $((N * 5 + 20)) >"$W/probe.out" &
ppid=$!
sleep 1
: >"$W/kills"
for i in $(seq 1 "$N"); do
    d=$(xenstore-read /local/domain/0/data/understudy/shadowd/drv/domid)
    date +%s%N >>"$W/kills"
    "$XENSIM" crash "$d" >/dev/null
    until_ok 30 _live "$i" || die "crash $i: the frontend did not recover"
    until_ok 10 _sd_up || die "crash $i: shadowd did not bring a domain up"
    sleep 1.5
done
wait $ppid
while read -r k; do
    awk -v k="$k" '$1 != "PROBE-DONE" && $2 > k {
        if ($2 - prev > 20e6 && prev) { printf "%.1f\n", ($2 - k) / 1e6; exit }
        prev = $2 } $1 != "PROBE-DONE" && $2 <= k { prev = k }' "$W/probe.out"
done <"$W/kills" >"$W/recovery"
[ "$(wc -l <"$W/recovery")" -eq "$N" ] || die "a crash with no outage or no datagram through after it"
r50=$(pct 50 <"$W/recovery") r99=$(pct 99 <"$W/recovery")
json --argjson v "$r50" --argjson v99 "$r99" --argjson n "$N" \
    '{bench: "net.recovery", metric: "ms", value: $v, p50: $v, p99: $v99, crashes: $n}'
echo "net.recovery (crash -> first datagram through): p50 $r50 ms p99 $r99 ms over $N crashes"
