#!/usr/bin/env bash
# A driver domain serving two guests, one of them idle: only one guest can
# notice a hang, and its lone report cannot be corroborated by another
# guest. The domain corroborates it itself: paused (a hung domain, as xl
# pause leaves it), or its agent's heartbeat still since before the report
# for three of its intervals. Either starts the recovery at the speed of the
# frontend's deadline, long before heartbeat-timeout (30 s here) or the
# corroboration-window (30 s) would. (A lone report while the heartbeat
# moves waits: test-shadowd-shared-domain.)
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf "corroboration-window 30s"
sd_domain drv "heartbeat-timeout 30s"
sd_start
d1=$(sd_wait_up drv)
a=$(new_dom guest-a)
b=$(new_dom guest-b)
dev_add "$a" "$d1" 51712
dev_add "$b" "$d1" 51712
fe_start "$a" 51712 --ping-ms 100 --deadline-ms 1000
fe_start "$b" 51712 --ping-ms 600000 # idle: it never notices anything
wait_recovered "$a" 51712 0
wait_recovered "$b" 51712 0
wait_for 10 sd_recorded_is drv 2
expect_eq "guests" "$(sd_q drv .guests)" 2

# Paused: guest a's ping goes unanswered past its deadline; its lone report
# and the paused domain are enough.
t0=$(date +%s%N)
"$XENSIM" pause "$d1"
wait_recovered "$a" 51712 1 20
wait_recovered "$b" 51712 1 20
h=$(sdctl history --json | jq -c '.[-1]')
log "paused: $h ($((($(date +%s%N) - t0) / 1000000)) ms after the pause)"
echo "$h" | jq -r .reason | grep -q "guest $a reports timeout .*corroborated by the domain: the domain is paused" ||
    fail "not corroborated by the pause: $(echo "$h" | jq -r .reason)"
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "not restarted"

# Running, its agent stopped (heartbeat still) while the backends still
# answer: a report of guest a's (written by hand: its I/O still works) is
# corroborated once the heartbeat has been still for three intervals.
_agent_pid() { pgrep -f "understudy-agent --handler vbd=" | while read -r p; do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -q "^XENSIM_HYP=.*/dom$d2/" && echo "$p"; done; }
# Two heartbeats of the new domain seen first: with one, shadowd knows no
# interval to measure the silence by, and only heartbeat-timeout would act.
_hb_interval_known() { [ "$(sd_q drv '.heartbeat.interval_ms')" -gt 0 ]; }
wait_for 10 _hb_interval_known
p=$(_agent_pid)
[ -n "$p" ] || fail "no agent process for domain $d2"
kill -STOP "$p"
on_exit "kill -CONT $p 2>/dev/null"
as_dom "$a" xenstore-write "$(fe_dir "$a" 51712)/shadow/report" "9 timeout a request unanswered (by hand)"
wait_recovered "$a" 51712 2 20
h=$(sdctl history --json | jq -c '.[-1]')
log "heartbeat still: $h"
echo "$h" | jq -r .reason | grep -qE "corroborated by the domain: its heartbeat still for [0-9]+ ms \(every [0-9]+ ms before\)" ||
    fail "not corroborated by the heartbeat: $(echo "$h" | jq -r .reason)"
[ "$(echo "$h" | jq -r .detect_ms)" -lt 10000 ] ||
    fail "detected after $(echo "$h" | jq -r .detect_ms) ms: the heartbeat-timeout's pace, not the report's"
expect_check_clean
exit 0
