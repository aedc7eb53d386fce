#!/usr/bin/env bash
# Warm standby (`standby on`): shadowd keeps a second copy of the driver
# domain booted (heartbeat seen, serving nothing, under the other of the
# domain's two names); a failure promotes it (no domain is created in the
# restart phase) and a fresh standby is booted afterwards. A standby that
# dies or hangs is replaced without touching the guests, with backoff, until
# its restart budget is spent; then failures restart cold. A restarted
# shadowd adopts both domains from its state dir, and promotes the standby
# if the serving domain died while it was away.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
start_sim
sd_conf
sd_domain drv "standby on" "restart-budget 3"
sd_start
d1=$(sd_wait_up drv)

# until a ready standby other than the domains given
_sb_ready_other() {
    [ "$(sb_state)" = ready ] || return 1
    local s x
    s=$(sb_domid)
    for x in "$@"; do [ "$s" != "$x" ] || return 1; done
}
dom_name() { "$XENSIM" info "$1" | sed -n 's/^name=//p'; }
wait_for 15 _sb_ready_other 0 "$d1"
s1=$(sb_domid)
expect_eq "standby status key" "$(xenstore-read "$SD_DIR/drv/standby")" ready
expect_eq "standby-domid status key" "$(xenstore-read "$SD_DIR/drv/standby-domid")" "$s1"
expect_eq "serving domain's name" "$(dom_name "$d1")" drv
expect_eq "standby's name" "$(dom_name "$s1")" drv.2

g=$(new_dom guest)
dev_add "$g" "$d1" 51712
fe_start "$g" 51712
wait_recovered "$g" 51712 0
wait_for 10 sd_recorded_is drv 1
expect_check_clean

# 1. Failover: the standby is promoted; a fresh one appears afterwards.
"$XENSIM" crash "$d1"
wait_recovered "$g" 51712 1
wait_for 10 sd_state_is drv up
expect_eq "serving domain = the promoted standby" "$(sd_domid drv)" "$s1"
expect_eq "FE/backend-id" "$(fe_key "$g" 51712 backend-id)" "$s1"
h=$(sdctl history --json)
expect_eq "history: warm" "$(echo "$h" | jq -r '.[-1] | "\(.ok) \(.warm) \(.old_domid)->\(.new_domid)"')" \
    "true true $d1->$s1"
sd_log_has "restart: standby domain $s1 promoted" || fail "no promotion logged"
log "warm failover: $(echo "$h" | jq -c '.[-1] | {detect_ms, restart_ms, rewire_ms, reconnect_ms, total_ms}')"
wait_for 15 _sb_ready_other 0 "$d1" "$s1"
s2=$(sb_domid)
expect_eq "new standby takes the freed name" "$(dom_name "$s2")" drv
expect_check_clean

# 2. shadowd restarted: it adopts the serving domain and the standby.
sd_stop
sd_start
wait_for 10 sd_state_is drv up
expect_eq "adopted serving domain" "$(sd_domid drv)" "$s1"
wait_for 10 _sb_ready_other 0 "$s1"
expect_eq "adopted standby" "$(sb_domid)" "$s2"
sd_log_has "standby: domain $s2 adopted as drv" || fail "standby not adopted"
expect_check_clean
# The serving domain dies while shadowd is away: the standby is promoted at its start.
sd_stop
"$XENSIM" crash "$s1"
sd_start
wait_recovered "$g" 51712 2
wait_for 10 sd_state_is drv up
expect_eq "promoted after the restart" "$(sd_domid drv)" "$s2"
expect_eq "warm" "$(sdctl history --json | jq -r '.[-1].warm')" true
wait_for 15 _sb_ready_other 0 "$s1" "$s2"
s3=$(sb_domid)
expect_eq "names alternate" "$(dom_name "$s3")" drv.2
expect_check_clean

# 3. A standby that dies, or hangs, is replaced; the guest is not touched.
gen=$(fe_key "$g" 51712 shadow/generation)
nh=$(sdctl history --json | jq length)
"$XENSIM" crash "$s3"
wait_for 15 _sb_ready_other 0 "$s3"
s4=$(sb_domid)
"$XENSIM" pause "$s4" # hang: its heartbeat stops
wait_for 15 _sb_ready_other 0 "$s3" "$s4"
s5=$(sb_domid)
sd_log_has "standby: domain $s4 failed: heartbeat lost" || fail "standby hang not detected"
expect_eq "replacements" "$(sd_q drv .standby.replacements)" 2
expect_eq "guest untouched: generation" "$(fe_key "$g" 51712 shadow/generation)" "$gen"
expect_eq "guest untouched: recoveries" "$(fe_key "$g" 51712 shadow/recoveries)" 2
expect_eq "guest untouched: backend" "$(fe_key "$g" 51712 backend-id)" "$s2"
expect_eq "no recovery" "$(sdctl history --json | jq length)" "$nh"
expect_eq "serving domain unchanged" "$(sd_domid drv)" "$s2"
expect_check_clean

# 4. Budget and backoff: the standby's replacements back off (0, 200, 400 ms
# with backoff-initial 200ms) and stop at restart-budget 3; failures then
# restart cold.
"$XENSIM" crash "$s5"
_sb_failed() { [ "$(sb_state)" = failed ]; }
wait_for 15 _sb_ready_other 0 "$s5"
s6=$(sb_domid)
"$XENSIM" crash "$s6"
wait_for 15 _sb_failed
expect_eq "standby status key" "$(xenstore-read "$SD_DIR/drv/standby")" failed
sd_log_has "standby: GIVING UP on a standby: standby restart budget exhausted: 3 replacements" ||
    fail "no GIVING UP for the standby"
expect_eq "backoff of the replacements" \
    "$(grep -oE 'standby: domain [0-9]+ failed: .*a new one in [0-9]+ ms' "$SD_LOG" |
        sed -E 's/.*a new one in ([0-9]+) ms/\1/' | tr '\n' ' ')" "0 200 400 800 "
expect_eq "serving domain unchanged" "$(sd_domid drv)" "$s2"
expect_check_clean
"$XENSIM" crash "$s2"
wait_recovered "$g" 51712 3
wait_for 10 sd_state_is drv up
expect_eq "cold restart" "$(sdctl history --json | jq -r '.[-1] | "\(.ok) \(.warm)"')" "true false"
d_new=$(sd_domid drv)
[ "$d_new" != "$s2" ] || fail "no new domain"
expect_check_clean
exit 0
