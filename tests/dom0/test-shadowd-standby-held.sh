#!/usr/bin/env bash
# A standby is never booting during a recovery (standby.c, "Never during a
# recovery"): one whose boot is under way when the serving domain fails is
# held - paused, standby state "held" - while the cold restart runs, and
# released to boot on when the domain is up again; it is the same standby
# afterwards (not replaced), its boot-timeout counted from the release.
# Its boot here is slow on purpose: the domain's command waits for the
# seconds in a file before it starts the agent, so the test can fail the
# serving domain while the next standby is booting.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
delay=$TEST_TMP/boot-delay
echo 0 >"$delay"
cat >"$TEST_TMP/boot.sh" <<EOF
#!/bin/sh
sleep "\$(cat "$delay")"
exec "$AGENT" --handler vbd="$TBE" --heartbeat-ms 100
EOF
chmod +x "$TEST_TMP/boot.sh"
sd_conf
sd_domain drv "standby on" "command $TEST_TMP/boot.sh" "boot-timeout 6s" \
    "restart-delay 2s" "backoff-initial 2s" "backoff-max 4s"
sd_start
d1=$(sd_wait_up drv)

sb_is() { [ "$(sb_state)" = "$1" ] && [ "$(sb_domid)" = "$2" ]; }
_sb_booting_new() { [ "$(sb_state)" = booting ] && [ "$(sb_domid)" != "$1" ] && [ "$(sb_domid)" != 0 ]; }
_sb_ready() { [ "$(sb_state)" = ready ] && [ "$(sb_domid)" != 0 ]; }
dom_state() { "$XENSIM" info "$1" | sed -n 's/^state=//p'; }
wait_for 15 _sb_ready
s1=$(sb_domid)

g=$(new_dom guest)
dev_add "$g" "$d1" 51712
fe_start "$g" 51712
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1

# 1. A failover; the next standby's boot takes 4 s.
echo 4 >"$delay"
"$XENSIM" crash "$d1"
wait_recovered "$g" 51712 1
wait_for 10 sd_state_is drv up
expect_eq "serving domain = the promoted standby" "$(sd_domid drv)" "$s1"
wait_for 10 _sb_booting_new "$s1"
s2=$(sb_domid)
echo 0 >"$delay" # the cold restart's domain boots at once

# 2. The serving domain fails while s2 boots: a cold restart, s2 held
# through it (paused in the simulator, "held" in the store; the restart
# waits 2 s, its restart-delay or its backoff, so the hold is seen).
"$XENSIM" crash "$s1"
wait_for 10 sb_is held "$s2"
expect_eq "standby status key" "$(xenstore-read "$SD_DIR/drv/standby")" held
expect_eq "held standby is paused" "$(dom_state "$s2")" paused
sd_log_has "standby: domain $s2 held \(paused\) while drv is recovering" || fail "no hold logged"
expect_check_clean
wait_recovered "$g" 51712 2
wait_for 10 sd_state_is drv up
expect_eq "cold restart" "$(sdctl history --json | jq -r '.[-1] | "\(.ok) \(.warm)"')" "true false"
d3=$(sd_domid drv)
[ "$d3" != "$s2" ] && [ "$d3" != "$s1" ] || fail "no new serving domain ($d3)"

# 3. Released when the recovery is over: the same standby boots on and is
# ready, nothing replaced.
wait_for 15 sb_is ready "$s2"
sd_log_has "standby: domain $s2 released after [0-9]+ ms held; booting on" || fail "no release logged"
expect_eq "released standby runs" "$(dom_state "$s2")" running
expect_eq "replacements" "$(sd_q drv .standby.replacements)" 0
# held -> released comes after the recovery's end in the log
held=$(grep -n "standby: domain $s2 held" "$SD_LOG" | head -1 | cut -d: -f1)
rel=$(grep -n "standby: domain $s2 released" "$SD_LOG" | head -1 | cut -d: -f1)
[ "$held" -lt "$rel" ] || fail "release before hold in the log"
log "$(grep -E "standby: domain $s2 (held|released)" "$SD_LOG" | sed 's/^/  /')"
expect_check_clean

# 4. It is promoted at the next failure, as any ready standby.
"$XENSIM" crash "$d3"
wait_recovered "$g" 51712 3
wait_for 10 sd_state_is drv up
expect_eq "promoted the released standby" "$(sd_domid drv)" "$s2"
expect_eq "warm" "$(sdctl history --json | jq -r '.[-1].warm')" true
expect_check_clean
exit 0
