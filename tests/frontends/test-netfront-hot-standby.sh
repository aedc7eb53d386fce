#!/usr/bin/env bash
# A hot standby for the NIC (schema.md, "The hot standby's connection"): the
# shadow netfront holds a second, idle transport to a standby driver domain's
# netback, made in a slot of its frontend dir. Each driver domain has a network
# stack of its own (a namespace, its bridge uplinked to the LAN the server is
# on). While the guest probes the server every 2 ms (netprobe: UDP echo) and
# downloads again and again over TCP (checksummed), a stand-in toolstack crashes
# the serving domain NF_HOT times (10 by default) and promotes the standby each
# time (pause, FE/backend to the slot's backend, generation), slot-a, slot-b,
# slot-a, ..., attaching a fresh standby in the other slot after each. Each
# recovery is a switch with no handshake (the guest's log; the standby's
# netback connected once, before it was promoted), the RARP announcement of
# the guest's MAC reaches the server once per promotion, and the configuration
# is restored: promiscuous mode (the guest is promiscuous at every fault, and
# the standby was set up while it was not: request-multicast-control 0 on the
# promoted backend, another host's unicast and an unjoined group captured),
# then with promiscuous mode off the joined multicast group keeps arriving and
# the unjoined one is filtered (the list restored), and jumbo frames (MTU 9000:
# a datagram of 8900 bytes) pass. Then NF_COLD (10) cold rewires with no
# standby (crash, new domain, handshake). The interruption of the probes per
# failover (from the fault and from the toolstack's rewrite of FE to traffic
# steady again; the probes lost) is logged for both, p50 and p99; the hot
# standby's must be shorter.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/net-functions.sh"
requires busybox socat tcpdump curl sha256sum xenstore-read bc
[ -x "$NETBACK" ] || skip "netback not built"
PROBE=$TPROG/frontends/netprobe
[ -x "$PROBE" ] || fail "no $PROBE"
NF_HOT=${NF_HOT:-10}
NF_COLD=${NF_COLD:-10}
declare -A p50 p99
[ "$NF_HOT" -ge 3 ] || fail "NF_HOT=$NF_HOT: at least 3 failovers (slot-a, slot-b, slot-a)"
start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
NET_DOM_MTU=9000
in_d ip link set vd0 mtu 9000 && in_s ip link set vs0 mtu 9000 || fail "jumbo veth"
in_s ip route add 224.0.0.0/4 dev vs0 || fail "multicast route"
in_s ip neigh add 10.0.0.99 lladdr 02:00:00:00:00:99 dev vs0 nud permanent || fail "neigh"
BEKEYS=(mtu=9000)

g=$(netfront_dom guest --deadline-ms 1000 -v)
net_dom_ns drv0
d=$(netback_dom_ns drv0)
vif_add "$g" "$d" $VIF "${BEKEYS[@]}"
netback_go drv0 "$g" $VIF
touch "$TEST_TMP/go.guest"
guest_ip
in_g ip link set eth0 mtu 9000 || fail "guest mtu"
wait_for 10 nf_live_n "$g" 0
fe=$(vif_fe "$g" $VIF)
glog=$TEST_TMP/guest.log

# The server: UDP echo for the probes, HTTP for the downloads, and every 20 ms a
# datagram to the joined group, to an unjoined one and to another host.
T=$((60 + 8 * NF_HOT + 4 * NF_COLD))
in_s timeout "$T" "$PROBE" server 7001 "$T" &
mkdir -p "$TEST_TMP/www"
head -c 4M /dev/urandom >"$TEST_TMP/www/blob"
want=$(sha256sum <"$TEST_TMP/www/blob" | cut -d' ' -f1)
in_s timeout "$T" busybox httpd -f -p 10.0.0.1:8080 -h "$TEST_TMP/www" &
send() { for _ in $(seq 1 "$1"); do [ -e "$TEST_TMP/stop" ] && break; echo a >/dev/udp/239.1.2.3/5000; echo b >/dev/udp/239.9.9.9/5000; echo u >/dev/udp/10.0.0.99/5000; sleep 0.02; done; }
in_s bash -c "$(declare -f send); TEST_TMP=$TEST_TMP; send $((T * 50))" 2>/dev/null &
on_exit "touch $TEST_TMP/stop"
# The RARP announcements that reach the server.
ip netns exec "$NS_S" timeout "$T" tcpdump -l -n -e -i vs0 ether proto 0x8035 >"$TEST_TMP/rarp.out" 2>/dev/null &
in_g timeout "$T" socat -u UDP4-RECV:5000,ip-add-membership=239.1.2.3:10.0.0.2 OPEN:"$TEST_TMP/joined.out",creat,append &
wait_for 10 in_g curl -s -o /dev/null http://10.0.0.1:8080/
joined() { wc -l <"$TEST_TMP/joined.out" 2>/dev/null || echo 0; }
_joined_gt() { [ "$(joined)" -gt "$1" ]; }
wait_for 10 _joined_gt 0

# Downloads, one after the other, each checked, until the hot failovers are over.
fetch() {
    local n=0
    while [ ! -e "$TEST_TMP/stop-fetch" ]; do
        ip netns exec "$NS_G" curl -s --max-time 30 -o "$TEST_TMP/got" http://10.0.0.1:8080/blob ||
            { echo "curl exit $?" >>"$TEST_TMP/fetch.err"; return; }
        [ "$(sha256sum <"$TEST_TMP/got" | cut -d' ' -f1)" = "$want" ] ||
            { echo "download $n: wrong sha256" >>"$TEST_TMP/fetch.err"; return; }
        n=$((n + 1))
        echo $n >"$TEST_TMP/fetch.n"
    done
}
fetch &
fpid=$!
in_g "$PROBE" client 10.0.0.1 7001 2000 "$T" >"$TEST_TMP/probe.out" &
ppid=$!
sleep 0.5

# A capture of the guest's interface for 1 s: frames of the unjoined group, for
# another host (both seen only while the guest is promiscuous).
capture() {
    timeout 1 ip netns exec "$NS_G" tcpdump -p -l -n -e -i eth0 udp port 5000 >"$TEST_TMP/cap.out" 2>/dev/null
    mc=$(grep -c '> 01:00:5e:09:09:09' "$TEST_TMP/cap.out")
    uc=$(grep -c '> 02:00:00:00:00:99' "$TEST_TMP/cap.out")
}
# A datagram of 8900 bytes from the guest to the server: one frame, which every
# hop passes only with its MTU of 9000 (a bridge does not fragment).
in_s timeout "$T" socat -u -b 9000 UDP4-RECV:5001 OPEN:"$TEST_TMP/jumbo.out",creat,append &
jumbo() {
    local before
    before=$(stat -c %s "$TEST_TMP/jumbo.out" 2>/dev/null || echo 0)
    head -c 8900 /dev/zero | in_g socat -u -b 9000 - UDP4-SENDTO:10.0.0.1:5001 || fail "$1: socat"
    _jumbo_in() { [ "$(stat -c %s "$TEST_TMP/jumbo.out" 2>/dev/null || echo 0)" -ge $((before + 8900)) ]; }
    wait_for 5 _jumbo_in
}
_live_key_is() { [ "$(xenstore-read "$(vif_live_dir "$g")/request-multicast-control" 2>/dev/null)" = "$1" ]; }
_has_standby_keys() { xenstore-read "$fe/shadow/$1/tx-ring-ref" >/dev/null 2>&1; }
_gone() { ! "$XENSIM" info "$1" >/dev/null 2>&1; }

# The guest is promiscuous at each fault; the standby was set up while it was not.
vif_standby "$g" drv1 slot-a "${BEKEYS[@]}"
grep -q "standby connection up in slot-a" "$glog" || fail "no standby connection logged"
in_g ip link set eth0 promisc on || fail "promisc on"
: >"$TEST_TMP/faults"
VIF_STAMPS=$TEST_TMP/rewires # when the toolstack rewrote FE (vif_promote, rewire_vif)
: >"$VIF_STAMPS"
serving=drv0 slot=slot-a next=slot-b n=1 old=$fe
# The failed connection's transport keys leave its dir the turn after the switch (nf_forget).
_old_keys_gone() { ! xenstore-read "$old/tx-ring-ref" >/dev/null 2>&1; }
for i in $(seq 1 "$NF_HOT"); do
    sleep 0.5
    kill -0 $fpid 2>/dev/null || fail "the downloads stopped before fault $i: $(cat "$TEST_TMP/fetch.err")"
    date +%s%N >>"$TEST_TMP/faults"
    "$XENSIM" crash "$serving" >/dev/null
    vif_promote "$serving" "$g" "$SB"
    wait_for 10 nf_live_n "$g" "$i"
    [ "$(grep -c "switched to the standby connection" "$glog")" = "$i" ] ||
        fail "recovery $i was not a switch to the held connection"
    grep -q "reconnected to backend" "$glog" && fail "recovery $i: a handshake"
    expect_eq "drv$n: netback connections" "$(grep -c "connected to $fe/shadow/$slot" "$TEST_TMP/drv$n.log")" 1
    expect_eq "FE/state after the live connection left FE" "$(xenstore-read "$fe/state")" 6
    expect_eq "the live dir" "$(vif_live_dir "$g")" "$fe/shadow/$slot"
    wait_for 5 _old_keys_gone
    old=$fe/shadow/$slot
    lr=$(nf_key "$g" shadow/last-recovery)
    echo "${lr##*total=}" >>"$TEST_TMP/hot-total"
    log "fault $i: slot $slot promoted (domain $SB): $lr"
    # Promiscuous: the promoted backend does not filter multicast, frames for others pass.
    wait_for 5 _live_key_is 0
    capture
    [ "$mc" -gt 0 ] && [ "$uc" -gt 0 ] || fail "fault $i: promiscuous capture saw $mc unjoined, $uc for others"
    in_g ip link set eth0 promisc off || fail "promisc off"
    wait_for 5 _live_key_is 1
    j=$(joined)
    capture
    [ "$mc" = 0 ] && [ "$uc" = 0 ] || fail "fault $i: not promiscuous, captured $mc unjoined, $uc for others"
    wait_for 5 _joined_gt "$j"
    expect_eq "fault $i: guest MTU" "$(in_g cat /sys/class/net/eth0/mtu)" 9000
    jumbo "fault $i"
    log "fault $i: promiscuous, then the group restored and filtered, a jumbo frame through: ok"
    # A fresh standby in the other slot, once the old domain's backend dir is gone.
    wait_for 10 _gone "$serving"
    serving=drv$n n=$((n + 1))
    vif_standby "$g" "drv$n" "$next" "${BEKEYS[@]}"
    _has_standby_keys "$next" || fail "no transport keys in $next"
    in_g ip link set eth0 promisc on || fail "promisc on"
    t=$slot slot=$next next=$t
done
touch "$TEST_TMP/stop-fetch"
wait $fpid
[ -s "$TEST_TMP/fetch.err" ] && fail "downloads: $(cat "$TEST_TMP/fetch.err")"
log "$(cat "$TEST_TMP/fetch.n") downloads of 4 MiB, every sha256 right"
in_g ip link set eth0 promisc off
expect_eq "RARP announcements of $MAC at the server" "$(grep -c "$MAC > ff:ff:ff:ff:ff:ff" "$TEST_TMP/rarp.out")" "$NF_HOT"

# The standby held last is dropped when the toolstack takes it away: its keys go.
xenstore-rm "$fe/shadow/standby"
_dropped() { ! _has_standby_keys "$slot"; }
wait_for 5 _dropped
"$XENSIM" destroy "drv$n" >/dev/null
wait_for 10 _gone "drv$n"
xenstore-rm "$fe/shadow/$slot"
hot_recoveries=$(nf_key "$g" shadow/recoveries)

# Cold rewires: no standby, a new domain and a handshake in FE.
for i in $(seq 1 "$NF_COLD"); do
    sleep 0.5
    old_live=$(vif_live_dir "$g")
    new=drv$((n + i))
    net_dom_ns "$new" # made before the fault: a namespace is not part of a restart
    date +%s%N >>"$TEST_TMP/faults"
    "$XENSIM" crash "$serving" >/dev/null
    "$XENSIM" destroy "$serving" >/dev/null
    d=$(netback_dom_ns "$new")
    vif_be_add "$g" "$d" $VIF "${BEKEYS[@]}"
    netback_go "$new" "$g" $VIF
    date +%s%N >>"$VIF_STAMPS"
    rewire_vif "$g" $VIF "$d"
    wait_for 20 nf_live_n "$g" $((hot_recoveries + i))
    [ "$old_live" = "$fe" ] || xenstore-rm "$old_live" # no longer live or held
    expect_eq "cold rewire $i: the live dir" "$(vif_live_dir "$g")" "$fe"
    expect_eq "cold rewire $i: handshakes" "$(grep -c "reconnected to backend" "$glog")" "$i"
    lr=$(nf_key "$g" shadow/last-recovery)
    echo "${lr##*total=}" >>"$TEST_TMP/cold-total"
    log "cold rewire $i: domain $d: $lr"
    serving=$new
done
expect_eq "switches" "$(grep -c "switched to the standby connection" "$glog")" "$NF_HOT"
# Each on FE/backend alone, the generation read after the switch
# (sf_conn.c, hot_switch_first).
expect_eq "switches on one read" "$(grep -c "held idle: promoted" "$glog")" "$NF_HOT"
# What each switch left in xenstore, done one round trip a turn (switch_chore),
# the class's data path between; and each replay's steps timed.
_chores_done() { [ "$(grep -c "the switch's xenstore work done" "$glog")" = "$NF_HOT" ]; }
wait_for 5 _chores_done
expect_eq "recoveries with their replay's steps" "$(grep -c "(replay, ms after the restore: held frames on the ring" "$glog")" "$(nf_key "$g" shadow/recoveries)"
sleep 0.5
kill $ppid 2>/dev/null
wait $ppid 2>/dev/null

# The interruption of each failover, from the probes: the fault to the end of the
# last silence (no echo for over 100 ms: ASan builds on a busy machine show
# silences of up to 60 ms any time) within 5 s of it - traffic steady again
# (a cold rewire waits for the new backend's handshake; the carrier stays
# on, so the guest's neighbour entries stay resolved); the same from the
# toolstack's rewrite of FE (the frontend's part: the rest is the stand-in
# toolstack, each xensim command an ASan-built process); the time with no echo
# (those silences); and the probes lost (never echoed: those sent while the
# frontend held the guest's tx came back late, not lost).
awk '
    FILENAME == ARGV[1] { k[++nk] = $1; next }
    FILENAME == ARGV[2] { w[++nw] = $1; next }
    $1 != "PROBE-DONE" { r[++n] = $2; q[n] = $3 }
    END {
        for (f = 1; f <= nk; f++) {
            lo = k[f] - 50e6; hi = k[f] + 5e9
            if (f < nk && k[f + 1] < hi) hi = k[f + 1]
            end = k[f]; quiet = 0; lq = -1; hq = -1; got = 0; list = ""; delete seen
            for (i = 1; i <= n; i++) {
                if (r[i] < lo || r[i] >= hi) continue
                if (!(q[i] in seen)) { seen[q[i]] = 1; got++ }
                if (lq < 0 || q[i] < lq) lq = q[i]
                if (q[i] > hq) hq = q[i]
                if (i > 1 && r[i - 1] >= lo && r[i] - r[i - 1] > 100e6) {
                    quiet += r[i] - r[i - 1]; end = r[i]
                    list = list sprintf(" %.0f-%.0f", (r[i - 1] - k[f]) / 1e6, (r[i] - k[f]) / 1e6)
                }
            }
            printf "%d %.1f %.1f %.1f %d %.0f%s\n", f, (end - k[f]) / 1e6, (end - w[f]) / 1e6, quiet / 1e6, hq - lq + 1 - got, (w[f] - k[f]) / 1e6, list
        }
    }' "$TEST_TMP/faults" "$VIF_STAMPS" "$TEST_TMP/probe.out" >"$TEST_TMP/gaps"
pct() { sort -n | awk -v p="$1" '{ v[NR] = $1 } END { i = int((NR * p + 99) / 100); if (i < 1) i = 1; print v[i] }'; }
head -n "$NF_HOT" "$TEST_TMP/gaps" >"$TEST_TMP/hot"
tail -n "$NF_COLD" "$TEST_TMP/gaps" >"$TEST_TMP/cold"
while read -r f ms rw quiet lost at silences; do
    kind=hot
    [ "$f" -gt "$NF_HOT" ] && kind=cold
    log "failover $f ($kind): traffic steady $ms ms after the fault, $rw ms after the rewrite of FE (at $at ms); no echo for $quiet ms (from-to, ms after the fault: $silences); $lost probes lost"
done <"$TEST_TMP/gaps"
for c in hot cold; do
    for col in 2 3 5; do
        p50[$c$col]=$(awk -v c=$col '{ print $c }' "$TEST_TMP/$c" | pct 50)
        p99[$c$col]=$(awk -v c=$col '{ print $c }' "$TEST_TMP/$c" | pct 99)
    done
    log "$c: interruption p50 ${p50[${c}2]} ms p99 ${p99[${c}2]} ms; after the rewrite p50 ${p50[${c}3]} ms p99 ${p99[${c}3]} ms; probes lost p50 ${p50[${c}5]} p99 ${p99[${c}5]}"
done
# The frontend's own outage (last-recovery's total: the fault's first sign to
# the replay done) is shorter hot than cold, always; the traffic's too wherever
# the probes saw the cold rewire at all - on a quiet machine a cold rewire can
# end within the 100 ms a silence needs to count, and both read 0.
ht=$(pct 50 <"$TEST_TMP/hot-total") ct=$(pct 50 <"$TEST_TMP/cold-total")
log "the frontend's outage: hot p50 $ht ms, cold p50 $ct ms"
[ "$ht" -lt "$ct" ] || fail "the hot standby's outage (p50 $ht ms) is not shorter than a cold rewire's ($ct ms)"
if [ "$(echo "${p50[cold2]} > 0" | bc)" = 1 ]; then
    [ "$(echo "${p50[hot2]} < ${p50[cold2]} && ${p50[hot3]} < ${p50[cold3]}" | bc)" = 1 ] ||
        fail "the hot standby's interruption is not shorter than a cold rewire's"
else
    log "the probes saw no silence over 100 ms at a cold rewire: the traffic's comparison says nothing"
fi
"$XENSIM" info guest | grep -q state=running || fail "the frontend died"
kill -TERM "$("$XENSIM" info guest | sed -n 's/^pid=//p')"
"$XENSIM" wait guest --until shutdown --timeout 10 >/dev/null || fail "the frontend did not stop on SIGTERM"
log "$(grep -o "standby promotions.*" "$glog")"
net_sanitizer_check
exit 0
