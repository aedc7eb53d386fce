#!/usr/bin/env bash
# Each kind of NIC driver domain failure, found and repaired with shadowd doing
# all detection, restart and rewiring, while an interactive session (one small
# message every 20 ms over TCP) runs through the shadow netfront and never
# disconnects:
#   hang          the domain is paused: shadowd sees the heartbeat stop (the
#                 frontend, past its tx deadline, reports a timeout)
#   corrupt       netback answers with corrupt responses: the frontend reports
#                 bad-response; the domain serves only this guest, so shadowd
#                 restarts it on that report
#   backend-crash netback aborts; the agent restarts it in the same domain and the
#                 frontend reconnects to it (no new domain)
#   crash         the domain crashes
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/../dom0/dom0-functions.sh"
source "$(dirname "$0")/../frontends/net-functions.sh"
requires jq xenstore-read busybox socat
[ -x "$NETBACK" ] || skip "netback not built"
[ -x "$AGENT" ] || skip "understudy-agent not built"
start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
sd_conf
net_sd_domain "restart-budget 64" "stable-after 1s"
sd_start
d=$(sd_wait_up drv)
net_sd_guest "$d"
in_s timeout 900 socat TCP-LISTEN:7000,reuseaddr,fork EXEC:cat &
on_exit "kill $! 2>/dev/null"
wait_for 10 in_g busybox ping -c 1 -W 1 10.0.0.1
ip netns exec "$NS_G" "$TOP/tests/frontends/net-session.sh" 10.0.0.1 7000 \
    "$TEST_TMP/stop.session" "$TEST_TMP/session.out" &
spid=$!
on_exit "touch $TEST_TMP/stop.session"
progress() { grep -c SESSION-PROGRESS "$TEST_TMP/session.out" 2>/dev/null || echo 0; }
_progress_gt() { [ "$(progress)" -gt "$1" ]; }
wait_for 15 _progress_gt 0
n=0
for fault in hang corrupt backend-crash crash; do
    wait_for 20 _progress_gt "$(progress)"
    d=$(sd_domid drv)
    seq=$(nf_key "$g" shadow/report | cut -d' ' -f1)
    case $fault in
    hang) sdctl inject drv hang >/dev/null ;;
    corrupt) sdctl inject drv corrupt 1 >/dev/null ;;
    backend-crash) sdctl inject drv backend-crash >/dev/null ;;
    crash) "$XENSIM" crash "$d" >/dev/null ;;
    esac
    n=$((n + 1))
    wait_for 30 nf_live_n "$g" "$n"
    wait_for 10 sd_state_is drv up
    if [ $fault = backend-crash ]; then
        expect_eq "$fault: the same driver domain" "$(sd_domid drv)" "$d"
    else
        [ "$(sd_domid drv)" != "$d" ] || fail "$fault: no new driver domain"
    fi
    [ "$(nf_key "$g" shadow/report | cut -d' ' -f1)" -gt "${seq:-0}" ] || fail "$fault: nothing reported"
    grep -q SESSION-FAIL "$TEST_TMP/session.out" && fail "$fault: $(grep SESSION-FAIL "$TEST_TMP/session.out")"
    log "$fault: frontend '$(nf_key "$g" shadow/report)' $(nf_key "$g" shadow/last-recovery)"
done
expect_check_clean
wait_for 20 _progress_gt "$(progress)"
touch "$TEST_TMP/stop.session"
wait $spid || fail "the session: $(tail -1 "$TEST_TMP/session.out")"
grep -q '^SESSION-OK' "$TEST_TMP/session.out" || fail "the session: $(tail -1 "$TEST_TMP/session.out")"
log "session: $(tail -1 "$TEST_TMP/session.out")"
log "frames replayed (unanswered by a dead backend): $(grep -o "([0-9]* of them unanswered" "$TEST_TMP/guest.log" | tr -d "(" | cut -d" " -f1 | tr "\n" " ")"
grep -q 'bad-response' <(grep 'failed:' "$TEST_TMP/guest.log") || fail "no bad-response detected"
net_sanitizer_check
exit 0
