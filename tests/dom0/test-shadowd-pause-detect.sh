#!/usr/bin/env bash
# A paused driver domain is a hang found in pause-timeout, not heartbeat-
# timeout: a paused domain runs no vcpu, so its still heartbeat is not a slow
# host. A running domain whose heartbeat is still (its agent stopped) is not
# taken for paused: it waits for heartbeat-timeout.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf
sd_domain drv "heartbeat-timeout 4s" "pause-timeout 500ms"
sd_start
d1=$(sd_wait_up drv)
g=$(new_dom guest)
dev_add "$g" "$d1" 51712
fe_start "$g" 51712 --deadline-ms 30000
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1

# 1. Paused: found after pause-timeout (0.5 s) of still heartbeat, long
# before heartbeat-timeout (4 s).
sdctl inject drv hang >/dev/null || fail "shadowctl inject drv hang"
expect_eq "state after pause" "$("$XENSIM" info "$d1" | sed -n 's/^state=//p')" paused
wait_recovered "$g" 51712 1
d2=$(sd_domid drv)
[ "$d2" != "$d1" ] || fail "no new driver domain"
sd_log_has "detect: domain $d1: paused, its heartbeat still for [0-9]+ ms" || fail "pause not logged"
det=$(sdctl history --json | jq '.[-1].detect_ms')
[ "$det" -ge 400 ] && [ "$det" -le 2500 ] || fail "detect took $det ms, want about pause-timeout (0.5 s)"
expect_eq "detected by pause" "$(sd_detections pause)" 1
expect_eq "not by heartbeat" "$(sd_detections heartbeat)" 0
log "paused domain $d1 detected in $det ms"

# 2. Running with its agent stopped: the heartbeat is still but the domain
# is not paused, so only heartbeat-timeout finds it.
wait_for 10 sd_state_is drv up
agent=$("$XENSIM" info "$d2" | sed -n 's/^pid=//p')
[ -n "$agent" ] || fail "no agent pid for domain $d2"
kill -STOP "$agent"
on_exit "kill -CONT $agent 2>/dev/null"
t0=$(now_ms)
sleep 2
expect_eq "still serving after 2 s of a still heartbeat" "$(sd_domid drv)" "$d2"
wait_recovered "$g" 51712 2 20
took=$(($(now_ms) - t0))
[ "$took" -ge 3500 ] || fail "a running domain's still heartbeat was a hang after $took ms (heartbeat-timeout 4 s)"
expect_eq "second detection by heartbeat" "$(sd_detections heartbeat)" 1
expect_eq "pause detections" "$(sd_detections pause)" 1
expect_check_clean
exit 0
