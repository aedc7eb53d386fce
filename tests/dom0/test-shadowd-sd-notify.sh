#!/usr/bin/env bash
# shadowd speaks systemd's notify protocol (dom0-tools/README.md, "Under
# systemd"), here to notifyrecv, a stand-in for systemd's socket, with the
# environment systemd gives a Type=notify unit with WatchdogSec=400ms:
# READY=1 comes only once the driver domain is up (its agent, started 2 s
# late, has beaten: STATUS= said "starting" or "booting" before it, and
# shadowctl says up at once after it); STATUS= follows a crash (recovering,
# then up); WATCHDOG=1 comes every ~200 ms from the loop and stops while
# shadowd is stopped (SIGSTOP: what a hung loop looks like to systemd);
# STOPPING=1 on SIGTERM; every notification is shadowd's own, and
# shadowd-priv's environment has no NOTIFY_SOCKET. With WATCHDOG_PID naming
# another process (and an abstract socket) READY still comes, no ping does.
# The unit asks for all of it: Type=notify, NotifyAccess=main, WatchdogSec=.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
NOTIFYRECV=$TPROG/dom0/notifyrecv
[ -x "$NOTIFYRECV" ] || fail "test broken: no $NOTIFYRECV (make O=build/test SAN=1 all)"

u=$TOP/configs/systemd/shadowd.service
grep -qx "Type=notify" "$u" || fail "unit: not Type=notify"
grep -qx "NotifyAccess=main" "$u" || fail "unit: no NotifyAccess=main"
grep -qE "^WatchdogSec=[0-9]+s$" "$u" || fail "unit: no WatchdogSec= in seconds"

# recv_start ADDR: notifyrecv on ADDR, its output in $OUT, its pid in RECV_PID.
recv_start() {
    OUT=$TEST_TMP/notify-$((++nrecv)).out
    "$NOTIFYRECV" "$1" >"$OUT" 2>&1 &
    RECV_PID=$!
    on_exit "kill $RECV_PID 2>/dev/null"
    wait_for 5 grep -q "^# bound" "$OUT"
}
nrecv=0
# Notifications as lines without the pid, matched whole and literally.
lines() { cut -d' ' -f2- "$OUT"; }
count() { lines | grep -Fxc -- "$1"; }
has() { lines | grep -Fxq -- "$1"; }
line_of() { lines | grep -Fxn -- "$1" | head -1 | cut -d: -f1; }
# Every notification came from shadowd (pid $1).
all_from() {
    local bad
    bad=$(grep -v '^#' "$OUT" | awk -v p="$1" '$1 != p' | head -3)
    [ -z "$bad" ] || fail "notifications not from shadowd (pid $1): $bad"
}

start_sim
sd_conf
# The agent starts 2 s late, so READY has something to wait for. A 5 s
# heartbeat timeout: SIGSTOP below must not look like the domain's hang.
sd_domain drv "command /bin/sh -c \"sleep 2; exec $AGENT --handler vbd=$TBE --heartbeat-ms 100\"" \
    "heartbeat-timeout 5s"

# 1. READY=1 once the domain is up, not before.
recv_start "$TEST_TMP/notify.sock"
export NOTIFY_SOCKET=$TEST_TMP/notify.sock WATCHDOG_USEC=400000
sd_start
unset NOTIFY_SOCKET WATCHDOG_USEC
wait_for 20 has "READY=1"
_sd_is_up drv || fail "READY=1 came before drv was up: $(sd_q drv '.state + " heartbeat seen: " + (.heartbeat.seen | tostring)')"
r=$(line_of "READY=1")
expect_eq "the READY datagram's STATUS" "$(sed -n "$((r + 1))p" "$OUT" | cut -d' ' -f2-)" \
    "STATUS=1 driver domain: 1 up"
lines | head -n "$r" | grep -qE "^STATUS=1 driver domain: 1 (starting|booting) \(drv\)$" ||
    fail "no STATUS saying drv was starting or booting before READY: $(cat "$OUT")"
hb=$(grep -n "agent heartbeat seen" "$SD_LOG" | head -1 | cut -d: -f1)
rd=$(grep -n "told the service manager shadowd is ready: 1 driver domain: 1 up" "$SD_LOG" | head -1 | cut -d: -f1)
[ -n "$hb" ] && [ -n "$rd" ] && [ "$hb" -lt "$rd" ] ||
    fail "shadowd's log: the heartbeat (line ${hb:-none}) must come before READY (line ${rd:-none})"
D1=$(sd_domid drv)

# 2. Only shadowd speaks; shadowd-priv did not inherit the socket.
PRIV=$(cat "/proc/$SD_PID/task/"*/children 2>/dev/null | tr ' ' '\n' | grep -m1 .)
[ -n "$PRIV" ] || fail "shadowd $SD_PID has no child"
expect_eq "the child" "$(cat "/proc/$PRIV/comm")" shadowd-priv
tr '\0' '\n' <"/proc/$PRIV/environ" | grep -E '^(NOTIFY_SOCKET|WATCHDOG_USEC|WATCHDOG_PID)=' &&
    fail "shadowd-priv inherited the notify environment"

# 3. The watchdog: WATCHDOG_USEC=400000 is a ping every 200 ms; over 2 s
#    about 10, with room for a loaded machine.
n0=$(count "WATCHDOG=1")
sleep 2
n=$(($(count "WATCHDOG=1") - n0))
log "WATCHDOG=1 in 2 s: $n"
[ "$n" -ge 4 ] && [ "$n" -le 15 ] || fail "$n watchdog pings in 2 s (want about 10)"

# 4. A stopped shadowd does not ping (systemd would kill and restart it).
kill -STOP "$SD_PID"
sleep 0.3 # a ping already sent may still land
n0=$(count "WATCHDOG=1")
sleep 1
n1=$(count "WATCHDOG=1")
kill -CONT "$SD_PID"
expect_eq "pings while shadowd was stopped" "$((n1 - n0))" 0
pings_at_least() { [ "$(count "WATCHDOG=1")" -ge "$1" ]; }
wait_for 5 pings_at_least $((n1 + 2)) # and again once it runs

# 5. STATUS follows a recovery.
"$XENSIM" crash "$D1"
wait_for 20 has "STATUS=1 driver domain: 1 recovering (drv)"
up_after() { [ "$(lines | grep -Fxn "STATUS=1 driver domain: 1 up" | tail -1 | cut -d: -f1)" -gt "$1" ]; }
wait_for 20 up_after "$(line_of "STATUS=1 driver domain: 1 recovering (drv)")"

# 6. STOPPING=1 on SIGTERM, after READY; all of it from shadowd.
pid=$SD_PID
sd_stop
wait_for 5 has "STOPPING=1"
[ "$(line_of "STOPPING=1")" -gt "$(line_of "READY=1")" ] || fail "STOPPING before READY"
all_from "$pid"

# 7. WATCHDOG_PID of another process: no pings, READY all the same (the
#    domain is adopted). An abstract socket this time.
recv_start "@understudy-notify-$$-$RANDOM"
NOTIFY_SOCKET=$(sed -n 's/^# bound //p' "$OUT")
export NOTIFY_SOCKET WATCHDOG_USEC=400000 WATCHDOG_PID=$$
sd_start
unset NOTIFY_SOCKET WATCHDOG_USEC WATCHDOG_PID
wait_for 10 has "READY=1"
sleep 1
expect_eq "pings with WATCHDOG_PID=$$ (not shadowd's)" "$(count "WATCHDOG=1")" 0
sd_log_has "WATCHDOG_PID=$$ is not shadowd \(pid $SD_PID\): no watchdog pings" ||
    fail "shadowd did not say why it does not ping"
all_from "$SD_PID"
exit 0
