# tests/backends/vsnd-functions.sh - virtual sound cards on xensim, set up as
# libxl sets them up for an xl vsnd= line (the card in the frontend's dir).
# Source after tests/snd/snd-functions.sh (which sources tests/functions.sh).
#
#   vsnd_add GUEST DRV DEVID [KEY=VALUE...]  backend and frontend dirs; KEYs are the card's
#                                            (relative to the frontend dir: "0/0/type=p");
#                                            with none, vsnd_card's default card;
#                                            VSND_FE=DIR: the frontend dir is DIR (a slot)
#   vsnd_fe GUEST DEVID / vsnd_be DRV GUEST DEVID   the two paths
#   sndback_start DRV GUEST DEVID [ARGS...]  sndback in DRV, in the background; sets SB_PID
#   sndback_alive                            SB_PID still running
#   sfront GUEST DEVID [OPTS] CMD...         the test frontend in GUEST, in the foreground
#   vsnd_setup [KEY=VALUE...] [-- ARGS]      sim, domains drv and guest, the clocked PCM
#                                            (snd_setup), card $DEV, sndback in InitWait

SNDBACK=$BUILD/bin/sndback
SFRONT=$TPROG/backends/sfront
DEV=0

vsnd_fe() { echo "/local/domain/$1/device/vsnd/$2"; }
vsnd_be() { echo "/local/domain/$1/backend/vsnd/$2/$3"; }

# The default card: one PCM device with a playback and a capture stream on
# the clocked test PCM.
VSND_CARD=(short-name=Understudy long-name="Understudy test card"
    sample-rates=44100,48000 sample-formats=s16_le,s32_le channels-max=2 buffer-size=262144
    0/name=clocked 0/0/type=p 0/0/unique-id=alsa:clocked 0/1/type=c 0/1/unique-id=alsa:clocked#in)

vsnd_add() {
    local g=$1 d=$2 dev=$3 kv
    shift 3
    [ $# -gt 0 ] || set -- "${VSND_CARD[@]}"
    local fe be
    fe=${VSND_FE:-$(vsnd_fe "$g" "$dev")}
    be=$(vsnd_be "$d" "$g" "$dev")
    xenstore-write "$be/frontend" "$fe" "$be/frontend-id" "$g" "$be/online" 1 \
        "$be/state" 1 || fail "vsnd_add: writing $be"
    xenstore-write "$fe/backend" "$be" "$fe/backend-id" "$d" "$fe/state" 1 ||
        fail "vsnd_add: writing $fe"
    for kv in "$@"; do
        xenstore-write "$fe/${kv%%=*}" "${kv#*=}" || fail "vsnd_add: writing $fe/${kv%%=*}"
    done
    xenstore-chmod -r "$fe" "n$g" "r$d" || fail "vsnd_add: chmod $fe"
    xenstore-chmod -r "$be" "n$d" "r$g" || fail "vsnd_add: chmod $be"
}

sndback_start() {
    local d=$1 g=$2 dev=$3
    shift 3
    SB_LOG=$TEST_TMP/sndback-$dev.log
    "$XENSIM" exec "$d" -- "$SNDBACK" --backend "$(vsnd_be "$d" "$g" "$dev")" "$@" >>"$SB_LOG" 2>&1 &
    SB_PID=$!
    on_exit "kill -KILL $SB_PID 2>/dev/null; _sndback_log_check $SB_LOG"
}

sndback_alive() { kill -0 "$SB_PID" 2>/dev/null; }

_sndback_log_check() {
    if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$1" 2>/dev/null; then
        echo "FAIL: sanitizer report in $1:" >&2
        grep -A30 -E 'Sanitizer|runtime error' "$1" | head -60 >&2
        exit 1
    fi
}

# sfront GUEST DEVID [--OPTION VALUE]... CMD...
sfront() {
    local g=$1 dev=$2 opts=()
    shift 2
    while [ $# -gt 1 ] && [ "${1#--}" != "$1" ]; do opts+=("$1" "$2"); shift 2; done
    "$XENSIM" exec "$g" -- "$SFRONT" "${opts[@]}" "$(vsnd_fe "$g" "$dev")" "$@"
}

sb_state() { xenstore-read "$(vsnd_be "$1" "$2" "$3")/state" 2>/dev/null; }
sb_state_is() { [ "$(sb_state "$1" "$2" "$3")" = "$4" ]; }

vsnd_setup() {
    local keys=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do keys+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    snd_setup
    [ -x "$SNDBACK" ] || skip "sndback not built (libasound2-dev missing?)"
    start_sim
    drv=$(new_dom drv)
    guest=$(new_dom guest)
    vsnd_add "$guest" "$drv" "$DEV" "${keys[@]}"
    sndback_start "$drv" "$guest" "$DEV" "$@"
    wait_for 10 sb_state_is "$drv" "$guest" "$DEV" 2
}

# sfront_out OUT GUEST DEVID CMD...: sfront with its output in OUT (shown), for timed.
sfront_out() {
    local out=$1 rc=0
    shift
    sfront "$@" >"$out" 2>&1 || rc=$?
    sed 's/^/  | /' "$out"
    return $rc
}

# sfront_field OUT PREFIX KEY: KEY=... of the line of OUT starting with PREFIX.
sfront_field() { grep "^$2" "$1" | tail -1 | sed -n "s/.* $3=\([^ ]*\).*/\1/p"; }
