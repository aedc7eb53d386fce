# tests/backends/vbd-functions.sh - virtual block devices on xensim, set up
# as libxl sets them up. Source after tests/functions.sh; call start_sim first.
#
#   vbd_add GUEST DRV DEVID FILE [KEY=VALUE...]  frontend and backend dirs (extra backend keys)
#   vbd_fe GUEST DEVID / vbd_be DRV GUEST DEVID  the two paths
#   blkback_start DRV GUEST DEVID [ARGS...]      blkback in DRV, in the background; sets BB_PID
#   blkback_alive                                BB_PID still running
#   blkback_wait_exit SECONDS                    wait for BB_PID to exit; sets BB_RC
#   blkfront GUEST DEVID [OPTIONS] CMD...        the test frontend in GUEST, in the foreground
#   blkfront_bg OUT GUEST DEVID [OPTIONS] CMD... the same in the background; sets FRONT_PID
#   inject DRV FAULT [COUNT]                     a fault request (USK_DRV_INJECT), new seq each time
#   vbd_setup [KEY=VALUE...] [-- BLKBACK-ARGS]   all of it for one disk ($VBD_SIZE, 64M): sim, domains drv and
#                                                guest, 64 MiB $img, device $DEV, blkback in
#                                                InitWait

BLKBACK=$BUILD/bin/blkback
BLKFRONT=$TPROG/backends/blkfront
_inject_seq=0

vbd_fe() { echo "/local/domain/$1/device/vbd/$2"; }
vbd_be() { echo "/local/domain/$1/backend/vbd/$2/$3"; }

vbd_add() {
    local g=$1 d=$2 dev=$3 file=$4 kv
    shift 4
    local fe be
    fe=$(vbd_fe "$g" "$dev")
    be=$(vbd_be "$d" "$g" "$dev")
    xenstore-write "$be/frontend" "$fe" "$be/frontend-id" "$g" "$be/online" 1 \
        "$be/removable" 0 "$be/bootable" 1 "$be/state" 1 "$be/dev" xvda "$be/type" phy \
        "$be/mode" w "$be/device-type" disk "$be/params" "$file" || fail "vbd_add: writing $be"
    for kv in "$@"; do
        xenstore-write "$be/${kv%%=*}" "${kv#*=}" || fail "vbd_add: writing $be/${kv%%=*}"
    done
    xenstore-write "$fe/backend" "$be" "$fe/backend-id" "$d" "$fe/state" 1 \
        "$fe/virtual-device" "$dev" "$fe/device-type" disk || fail "vbd_add: writing $fe"
    xenstore-chmod -r "$fe" "n$g" "r$d" || fail "vbd_add: chmod $fe"
    xenstore-chmod -r "$be" "n$d" "r$g" || fail "vbd_add: chmod $be"
}

blkback_start() {
    local d=$1 g=$2 dev=$3
    shift 3
    BB_LOG=$TEST_TMP/blkback-$dev.log
    # Not through the as_dom function: $! must be blkback itself (xensim exec execs it).
    "$XENSIM" exec "$d" -- "$BLKBACK" --backend "$(vbd_be "$d" "$g" "$dev")" "$@" >>"$BB_LOG" 2>&1 &
    BB_PID=$!
    on_exit "kill -KILL $BB_PID 2>/dev/null; _blkback_log_check $BB_LOG"
}

blkback_alive() { kill -0 "$BB_PID" 2>/dev/null; }

blkback_wait_exit() {
    local i
    for ((i = 0; i < $1 * 20; i++)); do blkback_alive || break; sleep 0.05; done
    blkback_alive && fail "blkback $BB_PID still running after $1 s"
    wait "$BB_PID"
    BB_RC=$?
}

# A sanitizer report in a blkback log fails the test.
_blkback_log_check() {
    if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$1" 2>/dev/null; then
        echo "FAIL: sanitizer report in $1:" >&2
        grep -A30 -E 'Sanitizer|runtime error' "$1" | head -60 >&2
        exit 1
    fi
}

# _blkfront_cmd GUEST DEVID [OPTIONS] CMD...: the command line, in BF_CMD.
_blkfront_cmd() {
    local g=$1 dev=$2
    shift 2
    local opts=()
    while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do
        opts+=("$1")
        case $1 in --queues | --order | --seg | --protocol | --timeout) opts+=("$2"); shift ;; esac
        shift
    done
    BF_CMD=("$XENSIM" exec "$g" -- "$BLKFRONT" "${opts[@]}" "$(vbd_fe "$g" "$dev")" "$@")
}
blkfront() {
    _blkfront_cmd "$@"
    "${BF_CMD[@]}"
}
# blkfront_bg OUT GUEST DEVID [OPTIONS] CMD...: in the background, output in OUT; sets FRONT_PID.
blkfront_bg() {
    local out=$1
    shift
    _blkfront_cmd "$@"
    "${BF_CMD[@]}" >"$out" 2>&1 &
    FRONT_PID=$!
    on_exit "kill -KILL $FRONT_PID 2>/dev/null"
}

inject() {
    local d=$1
    shift
    _inject_seq=$((_inject_seq + 1))
    local k=/local/domain/$d/data/understudy/inject
    xenstore-write "$k" "$_inject_seq $*" && xenstore-chmod "$k" n0 "r$d" ||
        fail "inject: writing $k"
}

# be_state DRV GUEST DEVID: the backend's state now.
be_state() { xenstore-read "$(vbd_be "$1" "$2" "$3")/state" 2>/dev/null; }
state_is() { [ "$(be_state "$1" "$2" "$3")" = "$4" ]; }

DEV=51712
vbd_setup() {
    local keys=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do keys+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    start_sim
    drv=$(new_dom drv)
    guest=$(new_dom guest)
    img=$TEST_TMP/disk.img
    truncate -s "${VBD_SIZE:-64M}" "$img"
    vbd_add "$guest" "$drv" "$DEV" "$img" "${keys[@]}"
    blkback_start "$drv" "$guest" "$DEV" "$@"
    wait_for 10 state_is "$drv" "$guest" "$DEV" 2
}
