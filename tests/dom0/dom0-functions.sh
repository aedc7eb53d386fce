# tests/dom0/dom0-functions.sh - shadowd on xensim. Source after
# tests/functions.sh; call start_sim first.
#
#   sd_conf [LINE...]             a fresh config: state and run dirs in $TEST_TMP, tbe-* keys
#                                 ignored, then LINE... (global options)
#   sd_domain NAME [LINE...]      append a xensim driver domain running the agent with tbe as
#                                 its vbd backend, fast timeouts, then LINE... (its options)
#   sd_start / sd_stop / sd_kill9 shadowd in the background (SD_PID); sd_start waits for it
#   sd_supervise                  shadowd run as configs/systemd/shadowd.service says: its
#                                 ExecStartPre and ExecStart (paths replaced by this test's),
#                                 started again after RestartSec per Restart=; sd_kill9 then
#                                 kills shadowd only and sd_wait_restarted waits for the next one
#   sdctl ARGS...                 shadowctl against this test's shadowd
#   sd_json                       shadowctl status --json
#   sd_q NAME JQ                  jq JQ on domain NAME's status object (prints the result)
#   sd_domid NAME / sd_state NAME from shadowd's status keys in xenstore
#   sd_wait_up NAME [SEC]         until NAME is up with its agent's heartbeat seen; prints domid
#   dev_add GUEST DRV DEVID [K=V...]  a vbd as libxl writes it: backend and frontend dirs
#   fe_start GUEST DEVID [ARGS]   the test frontend (tfe) in GUEST, in the background
#   fe_freeze / fe_thaw GUEST DEVID  SIGSTOP / SIGCONT that frontend (a guest that is stuck)
#   fe_dir GUEST DEVID / be_dir DRV GUEST DEVID / fe_key GUEST DEVID KEY
#   wait_recovered GUEST DEVID N [SEC]  until shadow/state is live with N recoveries and
#                                 no domain of shadowd's is still recovering
#   sd_recorded NAME              how many devices shadowd has recorded for NAME
#   sd_recorded_is / sd_state_is / sd_phase_is / sd_attempts_is NAME VALUE  (for wait_for)
#   expect_check_clean            shadowctl check finds no violation
#   sd_log_has REGEX              shadowd's log matches
#   sd_detections SOURCE [NAME]   failures of NAME (default drv) shadowd found by SOURCE
#                                 (death, heartbeat, report, planned, pause), from its metrics
#   sb_state / sb_domid [NAME]    the state / domid of NAME's standby (default drv)
#   now_ms                        the wall clock in ms (no process)
#   sd_one_device_setup           the common start of the crash tests: shadowd with domain drv
#                                 (D1), guest G with vbd 51712 (cache=writeback rate=10Mb/s)
#                                 and its frontend connected and recorded; FE is its dir,
#                                 which holds a guest key test-marker=kept
#   sd_crash_and_recover          crash D1, wait for the recovery; D2 is the new domain

SHADOWD=$BUILD/bin/shadowd
SHADOWCTL=$BUILD/bin/shadowctl
AGENT=$BUILD/bin/understudy-agent
TFE=$TPROG/dom0/tfe
TBE=$TPROG/dom0/tbe
XSDEV=$TPROG/dom0/xsdev
SD_CONF=$TEST_TMP/shadowd.conf
SD_LOG=$TEST_TMP/shadowd.log
SD_SOCK=$TEST_TMP/run/shadowd.sock
SD_DIR=/local/domain/0/data/understudy/shadowd
SD_PID=

sd_conf() {
    {
        echo "# written by $(basename "$0")"
        echo "state-dir $TEST_TMP/state"
        echo "run-dir $TEST_TMP/run"
        echo "xensim-dir $XENSIM_DIR"
        echo "ignore-backend-key tbe-*"
        echo "report-interval 100ms"
        local l
        for l in "$@"; do echo "$l"; done
    } >"$SD_CONF"
}

sd_domain() {
    local name=$1 l d
    shift
    local defaults=("driver xensim" "command $AGENT --handler vbd=$TBE --heartbeat-ms 100"
        "log $TEST_TMP/$name.log" "heartbeat-timeout 1s" "boot-timeout 10s"
        "backoff-initial 200ms" "backoff-max 2s" "reconnect-timeout 10s")
    {
        echo "domain $name {"
        for d in "${defaults[@]}"; do
            for l in "$@"; do [ "${l%% *}" = "${d%% *}" ] && continue 2; done
            echo "    $d"
        done
        for l in "$@"; do echo "    $l"; done
        echo "}"
    } >>"$SD_CONF"
}

sdctl() { "$SHADOWCTL" -s "$SD_SOCK" "$@"; }
sd_json() { sdctl status --json; }
sd_q() { sd_json | jq -r --arg n "$1" ".domains[] | select(.name == \$n) | $2"; }
sd_domid() { xenstore-read "$SD_DIR/$1/domid" 2>/dev/null; }
sd_state() { xenstore-read "$SD_DIR/$1/state" 2>/dev/null; }

sd_start() {
    echo "=== shadowd start $(date +%T.%N)" >>"$SD_LOG"
    "$SHADOWD" -c "$SD_CONF" >>"$SD_LOG" 2>&1 &
    SD_PID=$!
    on_exit "_sd_cleanup $SD_PID"
    wait_for 10 sdctl status
}
_sd_cleanup() {
    kill -TERM "$1" 2>/dev/null && wait "$1" 2>/dev/null
    _sd_sanitizer_check
}
_sd_sanitizer_check() {
    # A sanitizer report from shadowd, the agents, the backends or tfe fails the test.
    local f
    for f in "$SD_LOG" "$TEST_TMP"/*.log; do
        if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$f" 2>/dev/null; then
            echo "FAIL: sanitizer report in $(basename "$f"):" >&2
            grep -B2 -A30 -E 'Sanitizer|runtime error' "$f" | head -60 >&2
            exit 1
        fi
    done
    return 0
}
sd_stop() { kill -TERM "$SD_PID" && wait "$SD_PID"; }
sd_kill9() {
    if [ -n "${SD_SUP_PID:-}" ]; then
        kill -KILL "$SD_PID" # the supervisor sees it die, as systemd would
    else
        kill -KILL "$SD_PID" && { wait "$SD_PID" 2>/dev/null || true; }
    fi
}

# The unit's settings, for sd_supervise.
SD_UNIT=$TOP/configs/systemd/shadowd.service
_unit() { sed -n "s/^$1=//p" "$SD_UNIT"; }
# A systemd time span (1s, 500ms, 2) in seconds, for sleep.
_span_s() {
    case $1 in
    *ms) echo "scale=3; ${1%ms} / 1000" | bc ;;
    *s) echo "${1%s}" ;;
    *[0-9]) echo "$1" ;;
    *) fail "unit: time span '$1' not understood by this test" ;;
    esac
}
# The unit's command line with this test's binary and config.
_unit_cmd() { _unit "$1" | sed "s|/usr/sbin/shadowd|$SHADOWD|; s|/etc/understudy/shadowd.conf|$SD_CONF|"; }
sd_supervise() {
    local restart sec pre cmd
    restart=$(_unit Restart) sec=$(_span_s "$(_unit RestartSec)")
    pre=$(_unit_cmd ExecStartPre) cmd=$(_unit_cmd ExecStart)
    case $restart in always | on-failure | on-abnormal) ;; *)
        fail "$SD_UNIT: Restart=$restart does not restart a shadowd killed by a signal" ;;
    esac
    [ -n "$cmd" ] || fail "$SD_UNIT: no ExecStart"
    (
        # Bounded: a test never needs more than 20 restarts.
        for ((n = 0; n < 20; n++)); do
            if [ -n "$pre" ]; then $pre >>"$SD_LOG" 2>&1 || exit 1; fi
            echo "=== shadowd start (supervised, as the unit) $(date +%T.%N)" >>"$SD_LOG"
            $cmd >>"$SD_LOG" 2>&1 &
            echo $! >"$TEST_TMP/shadowd.pid"
            rc=0
            wait $! 2>/dev/null || rc=$?
            [ -e "$TEST_TMP/shadowd.stop" ] && exit 0
            [ "$restart" = on-failure ] && [ $rc -eq 0 ] && exit 0
            echo "=== supervisor: shadowd exited with status $rc; Restart=$restart: again in ${sec}s" >>"$SD_LOG"
            sleep "$sec"
        done
    ) &
    SD_SUP_PID=$!
    on_exit "_sd_sup_cleanup"
    wait_for 10 test -s "$TEST_TMP/shadowd.pid"
    SD_PID=$(cat "$TEST_TMP/shadowd.pid")
    wait_for 10 sdctl status
}
_sd_sup_cleanup() {
    touch "$TEST_TMP/shadowd.stop"
    kill -TERM "$(cat "$TEST_TMP/shadowd.pid")" 2>/dev/null
    wait "$SD_SUP_PID" 2>/dev/null
    _sd_sanitizer_check
}
# After sd_kill9 of a supervised shadowd: until the next one answers.
_sd_new_pid() { [ "$(cat "$TEST_TMP/shadowd.pid")" != "$SD_PID" ] && sdctl status; }
sd_wait_restarted() {
    wait_for "${1:-15}" _sd_new_pid
    SD_PID=$(cat "$TEST_TMP/shadowd.pid")
}

_sd_is_up() {
    [ "$(sd_q "$1" '.state + " " + (.heartbeat.seen | tostring)')" = "up true" ]
}
sd_wait_up() {
    wait_for "${2:-15}" _sd_is_up "$1"
    sd_domid "$1"
}

fe_dir() { echo "/local/domain/$1/device/vbd/$2"; }
be_dir() { echo "/local/domain/$1/backend/vbd/$2/$3"; }
fe_key() { xenstore-read "$(fe_dir "$1" "$2")/$3" 2>/dev/null || true; }

# As libxl does: each dir with its permissions and keys in one transaction,
# the frontend first (KEY=VALUE pairs are backend keys; later ones win).
dev_add() {
    local g=$1 d=$2 dev=$3
    shift 3
    "$XSDEV" "$(fe_dir "$g" "$dev")" "n$g,r$d" backend="$(be_dir "$d" "$g" "$dev")" \
        backend-id="$d" state=1 virtual-device="$dev" device-type=disk shadow/generation=0 ||
        fail "dev_add: frontend dir"
    "$XSDEV" "$(be_dir "$d" "$g" "$dev")" "n$d,r$g" frontend="$(fe_dir "$g" "$dev")" \
        frontend-id="$g" online=1 removable=0 bootable=1 state=1 dev=xvda type=phy mode=w \
        device-type=disk params="$TEST_TMP/disk-$g-$dev.img" "$@" || fail "dev_add: backend dir"
}

fe_start() {
    local g=$1 dev=$2
    shift 2
    # $! is tfe itself: xensim exec execs it.
    "$XENSIM" exec "$g" -- "$TFE" "$(fe_dir "$g" "$dev")" "$@" >>"$TEST_TMP/tfe-$g-$dev.log" 2>&1 &
    echo $! >"$TEST_TMP/tfe-$g-$dev.pid"
    on_exit "kill -KILL $! 2>/dev/null"
    disown $!
}
# fe_freeze / fe_thaw GUEST DEVID: stop and resume the frontend (a stuck guest).
fe_freeze() { kill -STOP "$(cat "$TEST_TMP/tfe-$1-$2.pid")"; }
fe_thaw() { kill -CONT "$(cat "$TEST_TMP/tfe-$1-$2.pid")"; }

_recovered() {
    [ "$(fe_key "$1" "$2" shadow/state)" = live ] && [ "$(fe_key "$1" "$2" shadow/recoveries)" = "$3" ]
}
# No driver domain of shadowd's is still recovering (it sees a frontend back a
# moment after the frontend says so; its history and state follow then).
_sd_settled() {
    local n s
    for n in $(xenstore-list "$SD_DIR" 2>/dev/null); do
        s=$(sd_state "$n")
        [ "$s" != recovering ] && [ "$s" != starting ] || return 1
    done
}
_recovered_settled() { _recovered "$@" && _sd_settled; }
wait_recovered() { wait_for "${4:-20}" _recovered_settled "$1" "$2" "$3"; }

sd_recorded() { sd_q "$1" '[.devices[] | select(.recorded)] | length'; }
# For wait_for, which needs a command it can run again:
sd_recorded_is() { [ "$(sd_recorded "$1")" = "$2" ]; }
sd_state_is() { [ "$(sd_state "$1")" = "$2" ]; }
sd_phase_is() { [ "$(sd_q "$1" '.recovery.phase // ""')" = "$2" ]; }
sd_attempts_is() { [ "$(sd_q "$1" '.recovery.attempts // 0')" = "$2" ]; }

expect_check_clean() {
    local out
    out=$(sdctl check 2>&1) || fail "shadowctl check found violations:
$out"
}

sd_log_has() { grep -qE "$1" "$SD_LOG"; }
sd_detections() {
    sdctl metrics | sed -n "s/^shadowd_detections_total{domain=\"${2:-drv}\",source=\"$1\"} //p"
}
sb_state() { sd_q "${1:-drv}" '.standby.state'; }
sb_domid() { sd_q "${1:-drv}" '.standby.domid'; }
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

sd_one_device_setup() {
    start_sim
    sd_conf
    sd_domain drv
    sd_start
    D1=$(sd_wait_up drv)
    G=$(new_dom guest)
    dev_add "$G" "$D1" 51712 cache=writeback rate=10Mb/s
    FE=$(fe_dir "$G" 51712)
    xenstore-write "$FE/test-marker" kept && xenstore-chmod "$FE/test-marker" "n$G" "r$D1"
    fe_start "$G" 51712
    wait_recovered "$G" 51712 0
    wait_for 10 sd_recorded_is drv 1
}

sd_crash_and_recover() {
    "$XENSIM" crash "$D1"
    wait_recovered "$G" 51712 1
    D2=$(sd_domid drv)
    [ "$D2" != "$D1" ] || fail "no new driver domain (still $D1)"
    wait_for 10 sd_state_is drv up
}
