# tests/frontends/blk-standby-functions.sh - the stand-in toolstack's hot standby for the
# shadow blkfront (schema.md, "The hot standby's connection"), over the driver scenario of
# rewire-functions.sh (source both, after tests/functions.sh; call driver_setup first).
#
#   attach_standby NAME SLOT [KEY=VALUE...]  a driver domain NAME whose main process is the
#                          backend ($BLK_BACKEND) serving the slot FE/shadow/SLOT: the slot
#                          written (FE's toolstack keys, n<guest>,r<standby>), then the
#                          backend dir (frontend = the slot), then FE/shadow/standby; waits
#                          until the frontend holds it Connected; sets sb (domid), sb_name
#                          and sb_calls (io_calls of its backend once idle)
#   promote_standby OLD DOMID [keep]  fence OLD (pause), FE/backend and backend-id to
#                          DOMID's backend with the generation bumped (one transaction),
#                          FE/shadow/standby removed, FE's permissions n<guest>,r<DOMID>
#                          but its slots' (chmod_fe); then OLD destroyed in the background
#                          and FE/shadow/fenced raised to the switch's generation once it is
#                          gone (keep: left paused, the fenced key left to the caller);
#                          sets sw_gen (the switch's generation)
#   fenced_to G            FE/shadow/fenced := G unless it is there already (it only grows)
#   io_calls NAME          read and write syscalls domain NAME's main process made so far
#                          (syscr + syscw of /proc/PID/io: an idle backend makes none)
#   recovery_field KEY     KEY= of shadow/last-recovery (detect, reconnect, replay, total)

slot_connected() { [ "$(xenstore-read "$1/state" 2>/dev/null)" = 4 ]; }

# chmod_fe DIR GUEST DOMID: DIR and every node below it n<GUEST>,r<DOMID>, but the slots
# (which keep their own reader), as shadowd's chmod_tree does (schema.md, "Promote"): a
# node the frontend removes meanwhile is no error - after a hot switch it removes the
# failed connection's ring keys while this runs.
chmod_fe() {
    local dir=$1 g=$2 d=$3 k
    if ! xenstore-chmod "$dir" "n$g" "r$d" 2>/dev/null; then
        xenstore-exists "$dir" 2>/dev/null && return 1
        return 0
    fi
    for k in $(xenstore-list "$dir" 2>/dev/null); do
        case $dir/$k in */shadow/slot-*) continue ;; esac
        chmod_fe "$dir/$k" "$g" "$d" || return 1
    done
}

io_calls() {
    local pid
    pid=$(backend_pid "$1")
    awk '$1 == "syscr:" || $1 == "syscw:" {n += $2} END {print n + 0}' "/proc/$pid/io"
}

attach_standby() {
    local name=$1 slot=$2
    shift 2
    local fe sd be d keys=("${_be_keys[@]}")
    [ $# -gt 0 ] && keys=("$@")
    fe=$(fe_dir "$guest" "$DEV")
    sd=$fe/shadow/$slot
    xenstore-rm "$sd" 2>/dev/null || true
    # The domain and its backend dir first (the slot names them), the backend held until
    # the slot is written.
    d=$(BE_FRONTEND=$sd BE_HOLD=1 backend_dom "$name" "$guest" "$DEV" "$img" "${keys[@]}" -- \
        "${_be_args[@]}") || fail "attach_standby: $name"
    be=$(be_dir "$d" "$guest" "$DEV")
    xenstore-write "$sd/backend" "$be" "$sd/backend-id" "$d" "$sd/state" 1 \
        "$sd/virtual-device" "$DEV" "$sd/device-type" disk || fail "attach_standby: write $sd"
    xenstore-chmod -r "$sd" "n$guest" "r$d" || fail "attach_standby: chmod $sd"
    backend_release "$name"
    xenstore-write "$fe/shadow/standby" "$slot" || fail "attach_standby: write $fe/shadow/standby"
    wait_for 10 slot_connected "$sd"
    sb=$d sb_name=$name
    # Settled: the handshake's last watch events read. From here it does nothing.
    sleep 0.3
    sb_calls=$(io_calls "$name")
}

promote_standby() {
    local old=$1 d=$2 fe gen
    fe=$(fe_dir "$guest" "$DEV")
    "$XENSIM" pause "$old" >/dev/null 2>&1 || true # fenced (or gone already)
    gen=$(xenstore-read "$fe/shadow/generation" 2>/dev/null || echo 0)
    sw_gen=$((gen + 1))
    xenstore-write "$fe/backend" "$(be_dir "$d" "$guest" "$DEV")" "$fe/backend-id" "$d" \
        "$fe/shadow/generation" $sw_gen || fail "promote: write $fe"
    xenstore-rm "$fe/shadow/standby" || fail "promote: remove $fe/shadow/standby"
    chmod_fe "$fe" "$guest" "$d" || fail "promote: chmod $fe"
    # As a toolstack does (schema.md, FE/shadow/fenced): destroyed in the background, then
    # fenced - a stand-in domain's I/O stays inside it, so gone means drained too.
    [ "${3:-}" = keep ] ||
        ({ "$XENSIM" destroy "$old" >/dev/null 2>&1; fenced_to "$sw_gen"; } >/dev/null 2>&1 &)
}

fenced_to() {
    local fe have
    fe=$(fe_dir "$guest" "$DEV")
    have=$(xenstore-read "$fe/shadow/fenced" 2>/dev/null || echo 0)
    [ "$have" -ge "$1" ] 2>/dev/null || xenstore-write "$fe/shadow/fenced" "$1"
}

recovery_field() {
    fe_key "$guest" "$DEV" shadow/last-recovery | sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p"
}
