#!/usr/bin/env bash
# A guest that only receives - a UDP sink fed numbered datagrams by the server
# every 20 ms; the guest sends nothing at all (ARP off on eth0, the server has a
# static neighbour entry for it) - keeps receiving across two failures of its
# network driver domain, with shadowd doing all detection, restart and rewiring:
#   pause         the domain is paused: shadowd's heartbeat stops (the
#                 netfront's probe may report it first)
#   backend-hang  netback stops answering inside a live domain (its heartbeat
#                 goes on): only the netfront can see it, and with no tx of the
#                 guest's only by its liveness probe - a no-op multicast list
#                 request on the idle tx ring, unanswered past the deadline -
#                 whose report makes shadowd restart the domain; it must come
#                 within the probe interval plus the deadline (and slack)
# After each, datagrams arrive again. The probe costs no frame: the guest's
# interface sends nothing and the server receives nothing; at the end the
# netfront's count of probes (its exit line, on SIGTERM) is within one per
# probe interval.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../dom0/dom0-functions.sh"
source "$(dirname "$0")/../frontends/net-functions.sh"
requires jq xenstore-read socat
[ -x "$NETBACK" ] || skip "netback not built"
[ -x "$AGENT" ] || skip "understudy-agent not built"
DEADLINE_MS=1000
PROBE_MS=$((DEADLINE_MS / 2)) # the netfront's default: half the deadline
start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
sd_conf
net_sd_domain "restart-budget 64" "stable-after 1s"
sd_start
d=$(sd_wait_up drv)
t_start=$(now_ms)
g=$(netfront_dom guest --deadline-ms $DEADLINE_MS)
vif_add "$g" "$d" $VIF
touch "$TEST_TMP/go.guest"
# The guest's interface never sends: no ARP (IPv6 is off in every namespace).
wait_for 20 _has_eth0
in_g ip link set eth0 arp off && in_g ip addr add 10.0.0.2/24 dev eth0 &&
    in_g ip link set eth0 up || fail "guest interface"
in_s ip neigh replace 10.0.0.2 lladdr "$MAC" dev vs0 nud permanent || fail "static neighbour"
wait_for 20 nf_live_n "$g" 0
wait_for 10 sd_recorded_is drv 1
grep -q "liveness probe after $PROBE_MS ms of idle tx" "$TEST_TMP/guest.log" ||
    log "no probe announced at connect: $(grep -m1 'connected to backend' "$TEST_TMP/guest.log")"

# The sink, then the talker: "UNDSTSEQ N." every 20 ms (bounded), until stop.talk.
in_g timeout 600 socat -u UDP-RECV:9999 "OPEN:$TEST_TMP/recv.txt,creat,append" &
on_exit "kill $! 2>/dev/null"
talk() {
    local n
    exec 3>/dev/udp/10.0.0.2/9999 || return 1
    for ((n = 1; n <= 30000; n++)); do
        [ -e "$TEST_TMP/stop.talk" ] && break
        echo "UNDSTSEQ $n." >&3
        sleep 0.02
    done
}
sleep 0.2
in_s bash -c "$(declare -f talk); TEST_TMP=$TEST_TMP; talk" 2>"$TEST_TMP/talk.err" &
on_exit "touch $TEST_TMP/stop.talk"
received() {
    local c
    c=$(grep -c UNDSTSEQ "$TEST_TMP/recv.txt" 2>/dev/null)
    echo "${c:-0}"
}
_received_gt() { [ "$(received)" -gt "$1" ]; }
wait_for 10 _received_gt 20
ifstat() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
srv_rx0=$(ifstat "$NS_S" vs0 rx_packets)
seq_of_report() { nf_key "$g" shadow/report | cut -d' ' -f1; }
_report_after() { [ "$(seq_of_report)" -gt "$1" ] 2>/dev/null; }

n=0
for fault in pause backend-hang; do
    d=$(sd_domid drv)
    seq=$(seq_of_report)
    seq=${seq:-0}
    hb=$(sd_detections heartbeat)
    rep=$(sd_detections report)
    t0=$(now_ms)
    case $fault in
    pause) sdctl inject drv hang >/dev/null || fail "shadowctl inject drv hang" ;;
    backend-hang) sdctl inject drv backend-hang >/dev/null || fail "shadowctl inject drv backend-hang" ;;
    esac
    n=$((n + 1))
    if [ $fault = backend-hang ]; then
        # Only the frontend can see this one, and only by its probe.
        wait_for 10 _report_after "$seq"
        took=$(($(now_ms) - t0))
        report=$(nf_key "$g" shadow/report)
        case $report in
        *"timeout liveness probe"*) ;;
        *) fail "$fault: reported '$report', want a timeout of the liveness probe" ;;
        esac
        bound=$((PROBE_MS + DEADLINE_MS + 1500))
        [ "$took" -le "$bound" ] || fail "$fault: reported after $took ms (bound $bound ms)"
        log "$fault: reported $took ms after the injection (bound $bound ms): '$report'"
    fi
    wait_for 30 nf_live_n "$g" "$n"
    wait_for 10 sd_state_is drv up
    [ "$(sd_domid drv)" != "$d" ] || fail "$fault: no new driver domain"
    hb_d=$(($(sd_detections heartbeat) - hb)) rep_d=$(($(sd_detections report) - rep))
    [ $fault = backend-hang ] && { [ "$rep_d" -eq 1 ] && [ "$hb_d" -eq 0 ] ||
        fail "$fault: detected by heartbeat $hb_d, report $rep_d (want the report only)"; }
    [ $fault = pause ] && { [ $((hb_d + rep_d)) -ge 1 ] ||
        fail "$fault: detected by heartbeat $hb_d, report $rep_d"; }
    r=$(received)
    wait_for 10 _received_gt $((r + 25))
    log "$fault: detections: heartbeat $hb_d, frontend's report $rep_d;" \
        "frontend '$(nf_key "$g" shadow/report)' $(nf_key "$g" shadow/last-recovery);" \
        "$(($(now_ms) - t0)) ms to 25 more datagrams"
done
expect_check_clean

# No frame from the guest, and none from its probes, on the wire.
expect_eq "frames the guest sent" "$(ifstat "$NS_G" eth0 tx_packets)" 0
expect_eq "frames the server received" "$(ifstat "$NS_S" vs0 rx_packets)" "$srv_rx0"
touch "$TEST_TMP/stop.talk"

# The probe's rate: at most one per interval (plus one per connection).
pid=$("$XENSIM" info guest | sed -n 's/^pid=//p')
[ -n "$pid" ] || fail "no pid for the guest's netfront"
kill -TERM "$pid" || fail "SIGTERM to the netfront"
_stopped() { grep -q "stopping: .*liveness probes [0-9]" "$TEST_TMP/guest.log"; }
wait_for 10 _stopped
elapsed=$(($(now_ms) - t_start))
probes=$(grep -o "liveness probes [0-9]*" "$TEST_TMP/guest.log" | tail -1 | awk '{print $3}')
max=$((elapsed / PROBE_MS + n + 1))
[ "$probes" -ge 2 ] || fail "only $probes liveness probes in $elapsed ms"
[ "$probes" -le "$max" ] || fail "$probes liveness probes in $elapsed ms (at most $max)"
log "$probes liveness probes in $elapsed ms (interval $PROBE_MS ms, at most $max); $(received) datagrams received"
# Exited (its sanitizer's report, if any, is in its log now).
wait_for 10 sh -c "! \"$XENSIM\" info guest 2>/dev/null | grep -q state=running"
net_sanitizer_check
exit 0
