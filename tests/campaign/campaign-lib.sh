# tests/campaign/campaign-lib.sh - sourced by a campaign cell (one row in one
# column, e.g. snd-cell.sh): the faults, the trial records and the cell's
# verdict. The cell runs as a test does (tests/functions.sh: TEST_TMP, BUILD,
# start_sim, wait_for); run-campaign gives it:
#   CAMPAIGN_OUT  the run's directory (trials.jsonl, cells.jsonl are appended)
#   ROW COLUMN    what this cell is; COLUMN is shadow, restart or none
#   SEED          the cell's seed (RANDOM is seeded with it: faults, timings)
#   FAULTS        faults to inject while the application runs
#   SECS          how long the application runs (seconds of audio, of work)
#   FAULT_KINDS   comma-separated, from those below (default: all)
#
# Faults (cmp_fault KIND), on the driver domain "drv" that shadowd keeps:
#   crash     xensim crash (a kernel panic)
#   kill      SIGKILL to every process of the domain
#   pause     the domain paused (its heartbeat stops; past the deadline)
#   hang      its backends stop answering (the frontends' deadline passes)
#   corrupt   a backend answers with an invalid response
#   slow      every response held back 300 ms for 1.5 s (a slow device; no
#             recovery is due)
#   recrash   a crash, and the replacement crashes too (a crash during recovery)
#   bcrash    the backend processes abort inside a live domain (the agent
#             starts them again)
# In the shadow and restart columns a fault is over when shadowd has
# restarted and rewired the domain (bcrash: when the frontend has reconnected)
# and the frontend is live again; in the none column shadowd has no restart
# budget, so after the first fault that kills the domain nothing comes back
# and the remaining faults have nothing to hit (recorded as "none-left").
. "$(dirname "${BASH_SOURCE[0]}")/../dom0/dom0-functions.sh"

CMP_KINDS_ALL=crash,kill,pause,hang,corrupt,slow,recrash,bcrash
# A campaign's faults come densely (CMP_GAP, below): shadowd's restart budget
# counts over a shorter window than its default 10 minutes, so that a cell
# of a hundred faults does not run out of it (the cells' sd_domain lines).
SD_RESTART_WINDOW=${SD_RESTART_WINDOW:-30s}
FAULT_KINDS=${FAULT_KINDS:-$CMP_KINDS_ALL}
RANDOM=$SEED
CMP_NFAULT=0
CMP_RECOVERED=0
CMP_DOWN=false # the none column: the domain is down for good

cmp_now_ms() { echo $(($(date +%s%N) / 1000000)); }

# A JSON string of $1.
cmp_js() { jq -Rn --arg s "$1" '$s'; }

# cmp_fe_key KEY: the frontend's shadow key (the cell sets CMP_FE, its dir).
cmp_fe_key() { xenstore-read "$CMP_FE/$1" 2>/dev/null || true; }
# cmp_read_sd, cmp_read_fe: shadowd's status of drv (CMP_SD_DOMID,
# CMP_SD_REC: recoveries completed, CMP_SD_STATE) and the frontend's
# (CMP_FE_STATE, CMP_FE_REC), each dir in one xenstore-ls. A fault's wait
# polls them 20 times a second: a jq or shadowctl there each time cost more
# CPU than the recovery it waited for, and slowed it.
_cmp_kv() { # the dir's "key = value" lines as K V
    local line
    while IFS= read -r line; do
        [ "${line# }" = "$line" ] || continue # a child's child
        line=${line%\"}
        echo "${line%% = *} ${line#* = \"}"
    done <<<"$(xenstore-ls "$1" 2>/dev/null)"
}
cmp_read_sd() {
    local k v
    CMP_SD_DOMID= CMP_SD_REC=0 CMP_SD_STATE=
    while read -r k v; do
        case $k in domid) CMP_SD_DOMID=$v ;; recoveries) CMP_SD_REC=$v ;; state) CMP_SD_STATE=$v ;; esac
    done <<<"$(_cmp_kv "$SD_DIR/drv")"
}
cmp_read_fe() {
    local k v
    CMP_FE_STATE= CMP_FE_REC=0
    while read -r k v; do
        case $k in state) CMP_FE_STATE=$v ;; recoveries) CMP_FE_REC=$v ;; esac
    done <<<"$(_cmp_kv "$CMP_FE/shadow")"
}
_cmp_live_ge() { cmp_read_fe; [ "$CMP_FE_STATE" = live ] && [ "$CMP_FE_REC" -ge "$1" ] 2>/dev/null; }
_cmp_hist_ge() { cmp_read_sd; [ "$CMP_SD_REC" -ge "$1" ] 2>/dev/null; }
_cmp_replaced() { cmp_read_sd; [ -n "$CMP_SD_DOMID" ] && [ "$CMP_SD_DOMID" != "$1" ] && [ "$CMP_SD_STATE" = up ]; }

# cmp_pick: a fault kind, at random from FAULT_KINDS, in CMP_PICK. (Not
# printed: RANDOM in a command substitution is bash's subshell's, which bash
# reseeds - the draw would not follow SEED, and the seed's sequence would not
# advance.)
cmp_pick() {
    local -a k
    IFS=, read -ra k <<<"$FAULT_KINDS"
    CMP_PICK=${k[$((RANDOM % ${#k[@]}))]}
}

# cmp_trial KIND T_MS RESULT RECOVERY_MS: one line of trials.jsonl.
cmp_trial() {
    local kind=$1 t=$2 result=$3 rms=$4
    jq -cn --arg row "$ROW" --arg col "$COLUMN" --arg kind "$kind" --argjson n "$CMP_NFAULT" \
        --argjson t "$t" --arg result "$result" --argjson rms "${rms:-null}" --argjson seed "$SEED" \
        --arg phases "$(cmp_fe_key shadow/last-recovery)" --arg report "$(cmp_fe_key shadow/report)" \
        --arg gap "$(cmp_fe_key shadow/last-gap)" \
        '{row: $row, column: $col, fault: $kind, n: $n, t_ms: $t, result: $result,
          recovery_ms: $rms, frontend_phases: $phases, frontend_report: $report,
          gap_ms: (if $gap == "" then null else ($gap | tonumber? // null) end), seed: $seed}' \
        >>"$CAMPAIGN_OUT/trials.jsonl"
}

# cmp_inject DOMID FAULT [N]: what shadowctl inject writes, written here so
# that it works with shadowd stopped too (the none column): "<seq> <fault>
# [<n>]" in the domain's inject key (xenstore-schema), readable by it - the
# fault as the backends name it: shadowctl's backend-hang and backend-crash
# are "hang" and "crash" there (dom0-tools/shadowd/ctl.c).
cmp_inject() {
    local d=$1 key seq f
    if [ "$COLUMN" != none ]; then
        shift
        sdctl inject drv "$@" >/dev/null
        return
    fi
    key=/local/domain/$d/data/understudy/inject
    seq=$(xenstore-read "$key" 2>/dev/null | awk '{print $1}')
    f=${2#backend-}
    shift 2
    xenstore-write "$key" "$((${seq:-0} + 1)) $f${*:+ $*}" && xenstore-chmod "$key" n0 "r$d"
}

# cmp_fault KIND: inject one fault and wait for what the column says should
# follow. Sets CMP_LAST (recovered, not-recovered, no-recovery-due,
# none-left) and appends the trial.
cmp_fault() {
    local kind=$1 d h rec t0 pgid want_hist=1 r
    CMP_NFAULT=$((CMP_NFAULT + 1))
    t0=$(cmp_now_ms)
    if $CMP_DOWN; then
        CMP_LAST=none-left
        cmp_trial "$kind" "$t0" none-left ""
        return 0
    fi
    cmp_read_sd
    cmp_read_fe
    d=$CMP_SD_DOMID h=$CMP_SD_REC rec=$CMP_FE_REC
    case $kind in
    crash) "$XENSIM" crash "$d" >/dev/null ;;
    kill)
        pgid=$("$XENSIM" info "$d" | sed -n 's/^pid=//p')
        [ -n "$pgid" ] && kill -KILL -- "-$pgid" 2>/dev/null
        ;;
    pause) "$XENSIM" pause "$d" >/dev/null ;;
    hang) cmp_inject "$d" backend-hang ;;
    corrupt) cmp_inject "$d" corrupt 1 ;;
    slow)
        cmp_inject "$d" slow 300
        sleep 1.5
        cmp_inject "$d" slow 0
        CMP_LAST=no-recovery-due
        cmp_trial slow "$t0" no-recovery-due ""
        return 0
        ;;
    recrash)
        "$XENSIM" crash "$d" >/dev/null
        if [ "$COLUMN" != none ] && wait_for_quiet 20 _cmp_replaced "$d"; then
            "$XENSIM" crash "$(sd_domid drv)" >/dev/null
        fi
        ;;
    bcrash) cmp_inject "$d" backend-crash; want_hist=0 ;;
    *) fail "cmp_fault: unknown kind $kind" ;;
    esac
    if [ "$COLUMN" = none ]; then
        # Nothing restarts the domain. The agent inside it still starts a
        # crashed backend again (bcrash); after any other fault the domain
        # is dead or broken (hang, corrupt: the frontend's report goes
        # unanswered) for good.
        if [ "$kind" = bcrash ] && wait_for_quiet 20 _cmp_live_ge $((rec + 1)); then
            CMP_LAST=recovered
            CMP_RECOVERED=$((CMP_RECOVERED + 1))
            cmp_trial "$kind" "$t0" recovered "$(($(cmp_now_ms) - t0))"
            return 0
        fi
        sleep 2
        CMP_DOWN=true
        CMP_LAST=not-recovered
        cmp_trial "$kind" "$t0" not-recovered ""
        return 0
    fi
    r=recovered
    if [ $want_hist = 1 ]; then
        wait_for_quiet 40 _cmp_hist_ge $((h + 1)) || r=not-recovered
        [ $r = recovered ] && { wait_for_quiet 40 _cmp_replaced "$d" || r=not-recovered; }
    fi
    [ $r = recovered ] && { wait_for_quiet 40 _cmp_live_ge $((rec + 1)) || r=not-recovered; }
    CMP_LAST=$r
    [ $r = recovered ] && CMP_RECOVERED=$((CMP_RECOVERED + 1))
    cmp_trial "$kind" "$t0" "$r" "$(($(cmp_now_ms) - t0))"
    [ $r = recovered ]
}

# wait_for_quiet SECS CMD...: wait_for without failing the cell: 0 or 1.
wait_for_quiet() {
    local secs=$1 end
    shift
    end=$(($(date +%s) + secs))
    until "$@"; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.05
    done
}

# cmp_series PID: while the program PID runs (at most 1.5 x SECS + 30 s),
# every 250 ms a line "T_MS COUNT" of the cell's cmp_counter (a running count
# of what its device moved: bytes) in series/ROW.COLUMN.tsv, T_MS after
# PROG_T0 - what the class's plot draws (plot-campaign). Nothing when the
# cell defines no cmp_counter (the sound rows draw the card's own level).
cmp_series() {
    declare -F cmp_counter >/dev/null || return 0
    local pid=$1 f max
    mkdir -p "$CAMPAIGN_OUT/series"
    f=$CAMPAIGN_OUT/series/$ROW.$COLUMN.tsv
    max=$(((SECS * 3 / 2 + 30) * 4))
    (
        echo "# t_ms count t0_ms=$PROG_T0"
        for ((n = 0; n < max; n++)); do
            kill -0 "$pid" 2>/dev/null || break
            echo "$(($(cmp_now_ms) - PROG_T0)) $(cmp_counter 2>/dev/null)"
            sleep 0.25
        done
    ) >"$f" &
}

# cmp_faults PID MIN_S SPAN_TENTHS: FAULTS faults while PID runs, each after
# a random pause of MIN_S + [0, SPAN_TENTHS] tenths of a second from the end
# of the one before (its recovery), and the
# cell's series sampled meanwhile: cmp_series).
cmp_faults() {
    local pid=$1 min=$2 span=$3 i r
    # CMP_GAP="MIN_S SPAN_TENTHS" (run-campaign, but for --quick): the run's
    # pace instead of the row's own.
    [ -z "${CMP_GAP:-}" ] || read -r min span <<<"$CMP_GAP"
    cmp_series "$pid"
    for ((i = 1; i <= FAULTS; i++)); do
        r=$((RANDOM % (span + 1))) # drawn here, not in the subshell below
        sleep "$(echo "$min + $r / 10" | bc -l)"
        kill -0 "$pid" 2>/dev/null || break
        cmp_pick
        cmp_fault "$CMP_PICK" || [ "$COLUMN" = none ] || break
        echo "campaign: $ROW/$COLUMN: fault $i of $FAULTS: $CMP_LAST" >&2
    done
}

# cmp_cell OUTCOME REASON: the cell's verdict (SUCCESS, MALFUNCTION, CRASH),
# one line of cells.jsonl; prints it.
cmp_cell() {
    local outcome=$1 reason=$2
    jq -cn --arg row "$ROW" --arg col "$COLUMN" --arg o "$outcome" --arg why "$reason" \
        --argjson faults "$CMP_NFAULT" --argjson rec "$CMP_RECOVERED" --argjson seed "$SEED" \
        --argjson secs "$SECS" \
        '{row: $row, column: $col, outcome: $o, reason: $why, faults: $faults,
          recovered: $rec, secs: $secs, seed: $seed}' >>"$CAMPAIGN_OUT/cells.jsonl"
    echo "campaign: $ROW/$COLUMN: $outcome ($CMP_NFAULT faults, $CMP_RECOVERED recovered): $reason"
}

# cmp_windows: the faults' windows of this cell, "FROM TO" in ms after the
# program started (PROG_T0), merged where they overlap: from 0.5 s before a
# fault to 1 s after its recovery (a slow spell: to 3.5 s after it began -
# 2 s after it ends; no recovery: to 2 s after it, the frontends' deadline
# and a second - what follows is the device's absence, not a recovery's
# cut). What a judge forgives.
cmp_windows() {
    jq -r --arg row "$ROW" --arg col "$COLUMN" --argjson s "$PROG_T0" \
        'select(.row == $row and .column == $col) |
         if .result == "recovered" then "\(.t_ms - $s - 500) \(.t_ms - $s + .recovery_ms + 1000)"
         elif .result == "no-recovery-due" then "\(.t_ms - $s - 500) \(.t_ms - $s + 3500)"
         elif .result == "not-recovered" then "\(.t_ms - $s - 500) \(.t_ms - $s + 2000)"
         else empty end' "$CAMPAIGN_OUT/trials.jsonl" | sort -n |
        awk 'NR == 1 { a = $1; b = $2; next }
             $1 <= b { if ($2 > b) b = $2; next }
             { print a, b; a = $1; b = $2 }
             END { if (NR) print a, b }'
}

# cmp_run_timed PID SECS: wait for the program PID at most 1.5 x SECS + 10 s;
# its status, or 124 if it had to be killed (its process group where it
# leads one: set -m). CMP_BEFORE_KILL names a function run first (a dead
# device's I/O cut off, so that nothing is left waiting on it).
cmp_run_timed() {
    local pid=$1 lim end
    lim=$(echo "$2 * 1.5 + 10" | bc | cut -d. -f1)
    end=$(($(date +%s) + lim))
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$(date +%s)" -ge "$end" ]; then
            [ -z "${CMP_BEFORE_KILL:-}" ] || "$CMP_BEFORE_KILL"
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            return 124
        fi
        sleep 0.1
    done
    wait "$pid"
}
