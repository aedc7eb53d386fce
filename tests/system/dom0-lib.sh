# dom0-lib.sh - helpers for the scripts that run inside dom0 (installed as
# /usr/lib/understudy/systest/lib.sh). Every wait is bounded.
say() { echo "SYSTEST $*"; }
up() { cut -d' ' -f1 /proc/uptime; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_until SECONDS CMD...: poll CMD every 0.5 s; 0 once it succeeds, 1 at the deadline.
wait_until() {
    local to=$1 end
    shift
    end=$(($(date +%s) + to))
    while ! "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -ge "$end" ] && return 1
        sleep 0.5
    done
    return 0
}

# result SCENARIO FAULT OUTCOME RECOVERY_MS DETAIL...: one row of the summary.
result() {
    local s=$1 f=$2 o=$3 r=$4
    shift 4
    say "RESULT scenario=$s fault=$f outcome=$o recovery_ms=$r $*"
}

# unit_start UNIT LOG: start a service the way systemd would from its unit
# file (dom0 here runs this script as init, not systemd): StateDirectory= and
# RuntimeDirectory= made with their modes, ExecStartPre= must succeed, then
# ExecStart= runs and Restart=always starts it again RestartSec= after it
# exits (at most 100 times). Prints the supervisor's pid.
unit_start() {
    local unit=$1 log=$2 key val pre=() start="" sdir="" smode=0755 rdir="" rmode=0755 rsec=0.1
    while IFS='=' read -r key val; do
        case $key in
        ExecStartPre) pre+=("$val") ;;
        ExecStart) start=$val ;;
        StateDirectory) sdir=$val ;;
        StateDirectoryMode) smode=$val ;;
        RuntimeDirectory) rdir=$val ;;
        RuntimeDirectoryMode) rmode=$val ;;
        RestartSec) rsec=${val%s} ;;
        esac
    done <"$unit"
    [ -n "$start" ] || { echo "unit_start: no ExecStart= in $unit" >&2; return 1; }
    [ -n "$sdir" ] && install -d -m "$smode" "/var/lib/$sdir"
    [ -n "$rdir" ] && install -d -m "$rmode" "/run/$rdir"
    local p
    for p in "${pre[@]}"; do
        $p >>"$log" 2>&1 || { echo "unit_start: ExecStartPre=$p failed (see $log)" >&2; return 1; }
    done
    (
        n=0
        while [ $n -lt 100 ]; do
            $start >>"$log" 2>&1
            echo "unit_start: $start exited rc=$? (restart $n)" >>"$log"
            n=$((n + 1))
            sleep "$rsec"
        done
    ) >/dev/null 2>&1 &
    echo $!
}

# shadowd_stop [SUPERVISOR_PID]: stop shadowd for good: unit_start's
# supervisor first (it would start it again), then shadowd itself.
shadowd_stop() {
    [ -n "${1:-}" ] && kill "$1" 2>/dev/null
    pkill -TERM -x shadowd
    wait_until 30 sh -c '! pgrep -x shadowd' || pkill -KILL -x shadowd
}

# collect_logs: every log of this boot as a tar on the results disk.
collect_logs() {
    local d=/tmp/systest-logs
    mkdir -p $d
    cp -a /var/log/xen $d/ 2>/dev/null
    cp /var/log/systest.log /var/log/shadowd.log /var/log/net-verify-server.log $d/ 2>/dev/null
    xl list >$d/xl-list.txt 2>&1
    xenstore-ls -fp >$d/xenstore.txt 2>&1
    dmesg >$d/dom0-dmesg.txt 2>&1
    xl dmesg >$d/xen-dmesg.txt 2>&1
    if [ -b /dev/vdc ]; then
        tar -C $d -cf /dev/vdc . && say "logs written to the results disk"
    else
        say "no results disk (/dev/vdc): logs not saved"
    fi
}

# mirror NAME [SKIP]: domain NAME's console log, live on dom0's console
# (run-systest keeps it in console.log), until the calling script exits; lines
# matching the regex SKIP are left out (they stay in the domain's log: the
# sound recorder's many lines would cost the emulated serial console).
MIRRORS=()
mirror() {
    if [ -n "${2:-}" ]; then
        tail -n +1 -F "/var/log/xen/console/guest-$1.log" 2>/dev/null |
            grep -a --line-buffered -v -e "$2" | sed -u "s|^|CONSOLE $1: |" &
    else
        tail -n +1 -F "/var/log/xen/console/guest-$1.log" 2>/dev/null | sed -u "s|^|CONSOLE $1: |" &
    fi
    MIRRORS+=($!)
    trap 'kill "${MIRRORS[@]}" 2>/dev/null' EXIT
}

# wl_finish SCENARIO GUEST SECONDS [ROW]: tell GUEST's workloads to stop (they
# check everything once more), wait for its result, and report it as the row
# ROW (default final-verify) of SCENARIO with the workloads' last lines. 0 if
# every workload passed. The result is read from the guest's console line
# "GUEST workloads rc=N": the guest powers off right after writing it, and its
# xenstore dir goes with it.
wl_finish() {
    local s=$1 g=$2 to=$3 row=${4:-final-verify} gid log done n0
    gid=$(xl domid "$g" 2>/dev/null) || { result "$s" "$row" FAIL - "$g is not running"; return 1; }
    log=/var/log/xen/console/guest-$g.log
    n0=$(grep -ac 'GUEST workloads rc=' "$log")
    finished() { [ "$(grep -ac 'GUEST workloads rc=' "$log")" -gt "$n0" ]; }
    xenstore-write /local/domain/$gid/data/systest/stop 1
    if ! wait_until "$to" finished; then
        result "$s" "$row" FAIL - "$g's workloads did not finish within $to s"
        return 1
    fi
    done=$(grep -a 'WL DONE' "$log" | tail -n 3 | sed 's/.*WL DONE //' | tr '\n' ' ')
    if grep -a 'GUEST workloads rc=' "$log" | tail -n 1 | grep -Eq 'rc=0([^0-9]|$)'; then
        result "$s" "$row" PASS - "$done"
        return 0
    fi
    result "$s" "$row" FAIL - "${done:-no WL DONE line} $(grep -a -m 2 'WL ERROR' "$log" | tr '\n' ' ')"
    return 1
}

# The sound driver domain's recording: snd-record's lines in drv-snd's
# console log (every instance of it appended to one file), read with
# snd-runs. Instances are counted by their "DRVDOM init" lines.
SND_LOG=/var/log/xen/console/guest-drv-snd.log
SND_RATE=48000
snd_ninst() {
    local n
    n=$(grep -a -c 'DRVDOM init uptime=' "$SND_LOG" 2>/dev/null)
    echo "${n:-0}"
}
# snd_heard INST FRAMES: an instance after INST recorded a run of FRAMES frames.
snd_heard() {
    awk -v after="$1" -v n="$2" '/DRVDOM init uptime=/ { i++ }
        i > after && /SNDREC (at|end) / && match($0, /run=[0-9]+/) &&
        substr($0, RSTART + 4, RLENGTH - 4) + 0 >= n { ok = 1; exit }
        END { exit !ok }' "$SND_LOG" 2>/dev/null
}
# snd_heard_from LINE FRAMES: a run of FRAMES frames recorded after line LINE.
snd_heard_from() {
    tail -n +"$1" "$SND_LOG" 2>/dev/null | awk -v n="$2" '/SNDREC (at|end) / &&
        match($0, /run=[0-9]+/) && substr($0, RSTART + 4, RLENGTH - 4) + 0 >= n { ok = 1; exit }
        END { exit !ok }'
}
# snd_crossing INST: snd-runs' gap or repeat line out of instance INST into a
# later one (a fault's gap).
snd_crossing() {
    /usr/lib/understudy/systest/snd-runs "$SND_LOG" | awk -v i="$1" \
        '($1 == "gap" || $1 == "repeat") && $2 == "from=" i && $3 != "to=" i { print; exit }'
}
# kv KEY LINE: KEY's value in a line of KEY=VALUE words.
# A domain's scheduler weight as Xen has it (credit2, Xen 4.17's default
# scheduler, or credit): "Name ID Weight ..." and one line for the domain.
sched_weight() {
    { xl sched-credit2 -d "$1" 2>/dev/null || xl sched-credit -d "$1" 2>/dev/null; } |
        awk 'NR == 2 { print $3 }'
}

weight_is() { [ "$(sched_weight "$1")" = "$2" ]; }

kv() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

# ---- the timeline of a recovery, on dom0's clock ----
# timeline_start FILE: every xenstore change under /local/domain from now on,
# one line each: "<ms since the epoch> <path> <value>" (xs-timeline: values of
# the keys a timeline needs, stamped in-process).
timeline_start() {
    TL_FILE=$1
    /usr/lib/understudy/systest/xs-timeline -t 900 /local/domain >"$TL_FILE" 2>&1 &
    TL_PID=$!
}
timeline_stop() {
    [ -n "${TL_PID:-}" ] || return 0
    kill "$TL_PID" 2>/dev/null
    wait "$TL_PID" 2>/dev/null
    TL_PID=
}
# timeline_report T_FAULT_MS SD_DIR GUEST_DOMID DEV_DIR REC0 [FAILED_DOMID]:
# the phases of the recovery that followed a fault at T_FAULT_MS, in ms after
# it, from the recorded changes: a crash's sysrq key read by the failed
# domain (sysrq_read; only for a crash), shadowd's first write to the guest's
# device (guest_told: rewired, or hot, told to switch), shadowd said it was
# recovering (SD/state recovering: hot, after the switch), the new domain
# published (SD/domid), its agent's first heartbeat, the guest's backend
# dir written under it (rewired), the backend in InitWait, frontend and
# backend Connected, the frontend live again (shadow/recoveries moved),
# shadowd up. DEV_DIR is the device's dir under the frontend's domain
# (device/vif/0); REC0 its shadow/recoveries before the fault. "-" where a
# step was not seen.
timeline_report() {
    local t0=$1 sd=$2 g=$3 dev=$4 rec0=${5:-0} failed=${6:--}
    awk -v t0="$t0" -v sd="$sd" -v g="$g" -v dev="$dev" -v rec0="$rec0" -v failed="$failed" '
        $1 < t0 {
            if ($2 == sd "/domid") old = $3
            if ($2 == "/local/domain/" g "/" dev "/shadow/recoveries") rec0 = $3
            next
        }
        function at(k) { if (!(k in T)) T[k] = $1 - t0 }
        # xl sysrq writes the key, the domain clears it when it reads it
        $2 == "/local/domain/" failed "/control/sysrq" { if ("sysrq_written" in T) at("sysrq_read"); at("sysrq_written") }
        # shadowd'"'"'s first step on the guest: its device rewired (or, hot,
        # told to switch: shadow/generation)
        $2 == "/local/domain/" g "/" dev "/backend" || $2 == "/local/domain/" g "/" dev "/shadow/generation" { at("guest_told") }
        $2 == sd "/state" && $3 == "recovering" { at("detected") }
        $2 == sd "/domid" && $3 != old && $3 != "-" { nd = $3; at("domain_published") }
        nd != "" && $2 == "/local/domain/" nd "/data/understudy/heartbeat" && $3 != "-" { at("agent_up") }
        nd != "" && index($2, "/local/domain/" nd "/backend/") == 1 {
            be = "/local/domain/" nd "/backend/"
            rest = substr($2, length(be) + 1)
            n = split(rest, a, "/")
            if (a[2] == g) {
                at("rewired")
                if (a[n] == "state" && $3 == "2") at("backend_initwait")
                if (a[n] == "state" && $3 == "4") at("backend_connected")
            }
        }
        $2 == "/local/domain/" g "/" dev "/state" && $3 == "4" && ("rewired" in T) { at("frontend_connected") }
        # (a rewire changes the frontend dir'"'"'s permissions, which fires its
        # watches with the values unchanged: only a new count says live)
        $2 == "/local/domain/" g "/" dev "/shadow/recoveries" && $3 != "-" && $3 + 0 > rec0 + 0 { at("frontend_live") }
        $2 == sd "/state" && $3 == "up" && ("detected" in T) { at("shadowd_up") }
        END {
            n = split("sysrq_read guest_told detected domain_published agent_up rewired backend_initwait frontend_connected backend_connected frontend_live shadowd_up", k, " ")
            for (i = 1; i <= n; i++) {
                if (k[i] == "sysrq_read" && !(k[i] in T)) continue # not a crash
                printf "%s%s=%s", (out++ ? " " : ""), k[i], (k[i] in T ? T[k[i]] : "-")
            }
            print ""
        }' "$TL_FILE"
}
