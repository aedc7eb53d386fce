#!/usr/bin/env bash
# Hot standby (schema.md, "The hot standby's connection"): with `standby on`
# shadowd gives each shadow-aware frontend a second, idle connection to the
# standby in a slot (FE/shadow/slot-a|b) - its backend started, the
# handshake done, nothing pinged. A failure fences the failed domain (pauses
# it), switches the frontend to that connection (no handshake: the standby's
# backend process is the one started before the failure), and destroys the
# failed domain after. The next standby connects in the other slot; three
# failovers go a -> b -> a; a restarted shadowd keeps the connections; a
# guest that goes takes its connection with it. A frontend that does not take
# slots (tfe --no-slot) is detached after 10 s and recovered warm.
# `shadowctl check` is clean after each step.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf
sd_domain drv "standby on" "restart-budget 10"
sd_start
d1=$(sd_wait_up drv)

_sb_ready_other() {
    [ "$(sd_q drv .standby.state)" = ready ] || return 1
    local s x
    s=$(sb_domid)
    for x in "$@"; do [ "$s" != "$x" ] || return 1; done
}
_check_clean() { sdctl check >/dev/null 2>&1; }
# _slot_up FE SLOT SB: FE holds SLOT Connected to standby SB's backend, also Connected.
_slot_up() {
    local be
    be="${4:-}"
    [ "$(xenstore-read "$1/shadow/standby" 2>/dev/null)" = "$2" ] &&
        [ "$(xenstore-read "$1/shadow/$2/state" 2>/dev/null)" = 4 ] &&
        [ "$(xenstore-read "$1/shadow/$2/backend" 2>/dev/null)" = "$3" ] &&
        [ "$(xenstore-read "$3/state" 2>/dev/null)" = 4 ]
}
line_of() { grep -nE "$1" "$SD_LOG" | tail -1 | cut -d: -f1; }

wait_for 15 _sb_ready_other 0 "$d1"
s1=$(sb_domid)
g=$(new_dom guest)
g2=$(new_dom guest2)
dev_add "$g" "$d1" 51712
dev_add "$g2" "$d1" 51712
FE=$(fe_dir "$g" 51712)
FE2=$(fe_dir "$g2" 51712)
xenstore-write "$FE/test-marker" kept && xenstore-chmod "$FE/test-marker" "n$g" "r$d1"
fe_start "$g" 51712
fe_start "$g2" 51712 --no-slot
wait_recovered "$g" 51712 0
wait_recovered "$g2" 51712 0
wait_for 10 sd_recorded_is drv 2

# 1. Attach: the slot Connected to the standby's backend, which names it.
BE1=$(be_dir "$s1" "$g" 51712)
wait_for 15 _slot_up "$FE" slot-a "$BE1"
expect_eq "standby's backend names the slot" "$(xenstore-read "$BE1/frontend")" "$FE/shadow/slot-a"
expect_eq "slot's backend-id" "$(xenstore-read "$FE/shadow/slot-a/backend-id")" "$s1"
expect_eq "toolstack key copied" "$(xenstore-read "$FE/shadow/slot-a/test-marker")" kept
expect_eq "virtual-device copied" "$(xenstore-read "$FE/shadow/slot-a/virtual-device")" 51712
xenstore-read "$BE1/tbe-pong" >/dev/null 2>&1 && fail "the standby connection was pinged"
expect_eq "FE still served by" "$(fe_key "$g" 51712 backend-id)" "$d1"
sb_pid=$(xenstore-read "$BE1/tbe-pid")
sd_log_has "hot standby: attached vbd 51712 of guest $g to standby domain $s1 in slot-a" ||
    fail "no attach logged"
grep -q "standby slot slot-a connected" "$TEST_TMP/tfe-$g-51712.log" || fail "tfe did not connect the slot"
# The frontend that does not take slots: detached after 10 s, the standby's dir gone.
_detached() { sd_log_has "hot standby: detached vbd 51712 of guest $g2 from slot-a: its slot not Connected"; }
wait_for 20 _detached
wait_for 5 _check_clean
expect_check_clean
xenstore-read "$FE2/shadow/standby" >/dev/null 2>&1 && fail "detached: FE/shadow/standby still there"
xenstore-read "$FE2/shadow/slot-a" >/dev/null 2>&1 && fail "detached: slot still there"
xenstore-read "$(be_dir "$s1" "$g2" 51712)" >/dev/null 2>&1 && fail "detached: standby's backend dir still there"
expect_eq "status: hot devices" "$(sd_q drv '"\(.standby.attached) \(.standby.hot_devices)"')" "1 1"

# 2. A hang (the agent stopped, the domain running): fenced by a pause,
# switched hot, destroyed after; the other device warm.
agent=$("$XENSIM" info "$d1" | sed -n 's/^pid=//p')
kill -STOP "$agent"
wait_recovered "$g" 51712 1
wait_recovered "$g2" 51712 1
wait_for 10 sd_state_is drv up
expect_eq "serving" "$(sd_domid drv)" "$s1"
expect_eq "FE/backend" "$(fe_key "$g" 51712 backend)" "$BE1"
expect_eq "history" "$(sdctl history --json | jq -r '.[-1] | "\(.ok) \(.warm) \(.hot_devices) \(.devices)"')" \
    "true true 1 2"
sd_log_has "restart: standby domain $s1 promoted" || fail "no promotion logged"
sd_log_has "rewire: 2 devices rewired to domain $s1 .*\(hot: 1 of 2 devices switched\)" ||
    fail "rewire line does not say hot"
fence=$(line_of "fence: domain $d1 paused")
switch=$(line_of "rewire: 2 devices rewired to domain $s1")
gone=$(line_of "fence: failed domain $d1 destroyed")
[ -n "$fence" ] && [ -n "$switch" ] && [ -n "$gone" ] || fail "fence/switch/destroy not all logged"
[ "$fence" -lt "$switch" ] && [ "$switch" -lt "$gone" ] ||
    fail "not paused ($fence) before the switch ($switch) and destroyed ($gone) after"
"$XENSIM" info "$d1" >/dev/null 2>&1 && fail "failed domain $d1 still exists"
# Fenced once destroyed (schema.md, FE/shadow/fenced): the disk frontends
# issue the writes they held for it.
_fenced() { [ "$(xenstore-read "$1/shadow/fenced" 2>/dev/null)" = "$(xenstore-read "$1/shadow/generation")" ]; }
wait_for 5 _fenced "$FE"
wait_for 5 _fenced "$FE2"
# No handshake in the promoted domain: its backend process is the one from before.
expect_eq "the standby's tbe serves" "$(xenstore-read "$BE1/tbe-pid")" "$sb_pid"
expect_eq "one handshake by it" "$(grep -c "tbe\[$sb_pid\]: frontend Initialised" "$TEST_TMP/drv.log")" 1
grep -q "switched to the standby connection in slot-a, no handshake" "$TEST_TMP/tfe-$g-51712.log" ||
    fail "tfe did not switch hot"
expect_eq "FE/state Closed" "$(fe_key "$g" 51712 state)" 6
expect_eq "the other warm: its backend names FE" "$(xenstore-read "$(be_dir "$s1" "$g2" 51712)/frontend")" "$FE2"
log "hot failover: $(sdctl history --json | jq -c '.[-1] | {detect_ms, restart_ms, rewire_ms, reconnect_ms, total_ms}')"
wait_for 10 _check_clean
expect_check_clean

# 3. The next standby connects in the other slot; a crash promotes it; then
# back to slot-a.
prev=$d1 cur=$s1 slot=slot-b n=1
for step in 2 3; do
    wait_for 20 _sb_ready_other 0 "$prev" "$cur"
    sb=$(sb_domid)
    BE=$(be_dir "$sb" "$g" 51712)
    wait_for 15 _slot_up "$FE" "$slot" "$BE"
    wait_for 10 _check_clean
    expect_check_clean
    pid=$(xenstore-read "$BE/tbe-pid")
    "$XENSIM" crash "$cur"
    n=$((n + 1))
    wait_recovered "$g" 51712 "$n"
    wait_recovered "$g2" 51712 "$n"
    wait_for 10 sd_state_is drv up
    expect_eq "crash $step: serving" "$(sd_domid drv)" "$sb"
    expect_eq "crash $step: hot" "$(sdctl history --json | jq -r '.[-1] | "\(.ok) \(.warm) \(.hot_devices)"')" \
        "true true 1"
    expect_eq "crash $step: the live connection's dir" "$(xenstore-read "$BE/frontend")" "$FE/shadow/$slot"
    expect_eq "crash $step: no new backend process" "$(xenstore-read "$BE/tbe-pid")" "$pid"
    sd_log_has "fence: domain $cur shut down \(crash\)" || fail "crash $step: fencing not logged"
    # One look at every domain found the crash and the standby running: the
    # promotion asked the driver nothing more (detect.c, sd_detect_release).
    sd_log_has "restart: standby domain $sb promoted .*seen running at the detection" ||
        fail "crash $step: the promotion looked at the standby again"
    wait_for 10 _fenced "$FE"
    # The slot left behind goes once the failed domain's backend dir is gone
    # (the next standby may take it at once).
    other=slot-a
    [ "$slot" = slot-a ] && other=slot-b
    _left() { xenstore-read "$FE/shadow/$other/backend" 2>/dev/null | grep -q "^/local/domain/$cur/"; }
    wait_for 10 eval '! _left'
    sd_log_has "hot standby: removed $other of vbd 51712 of guest $g" || fail "crash $step: $other not removed"
    wait_for 10 _check_clean
    expect_check_clean
    prev=$cur cur=$sb slot=$other
done
expect_eq "recoveries" "$(sdctl history --json | jq length)" 3

# 4. A restarted shadowd adopts the connections (no new attach) and the
# devices whose live connection is in a slot; the next failover is hot too.
wait_for 20 _sb_ready_other 0 "$prev" "$cur"
sb=$(sb_domid)
wait_for 15 _slot_up "$FE" "$slot" "$(be_dir "$sb" "$g" 51712)"
sd_stop
attaches=$(grep -c "hot standby: attached vbd 51712 of guest $g " "$SD_LOG")
sd_start
wait_for 10 sd_state_is drv up
wait_for 10 sd_recorded_is drv 2
_adopted() { sd_log_has "hot standby: vbd 51712 of guest $g holds $slot on standby domain $sb \(Connected\): adopted"; }
wait_for 10 _adopted
expect_eq "no new attach" "$(grep -c "hot standby: attached vbd 51712 of guest $g " "$SD_LOG")" "$attaches"
expect_check_clean
"$XENSIM" crash "$cur"
wait_recovered "$g" 51712 4
wait_recovered "$g2" 51712 4
wait_for 10 sd_state_is drv up
expect_eq "after a shadowd restart: hot" "$(sdctl history --json | jq -r '.[-1] | "\(.ok) \(.warm) \(.hot_devices)"')" \
    "true true 1"
wait_for 10 _check_clean
expect_check_clean

# 5. A guest goes (as libxl does it: the domain, then its backend dir): its
# device is forgotten, and its connection to the standby with it.
wait_for 20 _sb_ready_other 0 "$cur"
sb=$(sb_domid)
_held() { [ -n "$(xenstore-read "$(be_dir "$sb" "$g" 51712)/frontend" 2>/dev/null)" ]; }
wait_for 15 _held
"$XENSIM" destroy "$g"
xenstore-rm "$(be_dir "$(sd_domid drv)" "$g" 51712)"
wait_for 10 sd_recorded_is drv 1
wait_for 10 eval '! _held'
wait_for 10 _check_clean
expect_check_clean
exit 0
