# tests/frontends/rewire-functions.sh - a stand-in toolstack for the shadow
# blkfront's tests on xensim: disks set up as libxl sets them up, backends
# that are the main process of their driver domain (so that destroying the
# domain kills them), and the rewiring shadowd will do (DESIGN.md, "The
# recovery sequence", steps 3-4): a new driver domain with a new backend
# dir, the frontend dir rewritten in place, shadow/generation bumped.
# Source after tests/functions.sh; call start_sim first.
#
#   fe_dir GUEST DEVID / be_dir DRV GUEST DEVID     the two paths
#   guest_dom NAME CMD...          a guest domain running CMD once released; prints domid
#   guest_go NAME                  release it (after its device dir is written)
#   backend_dom NAME GUEST DEVID FILE [KEY=VALUE...] [-- BACKEND-ARGS...]
#                                  a driver domain whose main process is the backend
#                                  ($BLK_BACKEND: testback by default, or blkback), its
#                                  backend dir written first; prints domid. With
#                                  BACKEND_RESTARTS=N the backend is restarted in the
#                                  domain when it dies, up to N times. BE_FRONTEND=DIR: the
#                                  backend dir's frontend is DIR (a hot standby's slot), not
#                                  the device dir. BE_HOLD=1: the backend waits for
#                                  backend_release NAME (the caller writes more first).
#   frontend_add GUEST DEVID DRV   the frontend dir (state 1, shadow/generation 0)
#   rewire GUEST DEVID DRV         point the frontend dir at DRV's backend in place, bump
#                                  shadow/generation and, with it, shadow/fenced (the old
#                                  domain is destroyed first: a cold restart)
#   replace_backend OLD NEW GUEST DEVID FILE [KEY=VALUE...] [-- ARGS...]
#                                  destroy domain OLD if it still exists, start domain NEW
#                                  with a backend for the disk, rewire; prints NEW's domid
#   fe_key GUEST DEVID KEY         a key of the frontend dir (empty if absent)
#   inject DRV FAULT [COUNT]       a fault request (USK_DRV_INJECT), a new seq each time
#   private_mounts "$@"            first thing in a test that mounts: run it again in a
#                                  mount namespace of its own (see below)
#   sanitizer_check LOG...         fail on a sanitizer report in any LOG

TESTBACK=$TPROG/frontends/testback
DRIVER=$TPROG/frontends/blkfe-driver
PLUGIN=$BUILD/lib/nbdkit-understudy-blk-plugin.so
BLK_BACKEND=${BLK_BACKEND:-$TESTBACK}
_inject_seq=0

fe_dir() { echo "/local/domain/$1/device/vbd/$2"; }
be_dir() { echo "/local/domain/$1/backend/vbd/$2/$3"; }

# / may be a private mount (it is on the development VM): then any process that
# something else starts in a new mount namespace (ip netns exec) while our ext4 is
# mounted holds copies of our mounts - and the loop device and the FUSE file -
# for as long as it lives, and they cannot be unmounted. In a namespace of our
# own they are ours alone, and go with it. Call before anything else.
private_mounts() {
    [ -n "${_UNDERSTUDY_PRIVATE_NS:-}" ] && return 0
    command -v unshare >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] || return 0
    export _UNDERSTUDY_PRIVATE_NS=1
    exec unshare --mount --propagation private bash "$0" "$@"
}

# A domain whose main process waits for $TEST_TMP/go.NAME, then runs CMD.
# The backend variant reads its backend dir from that file.
guest_dom() {
    local name=$1
    shift
    new_dom "$name" sh -c 'f=$1; shift; while [ ! -e "$f" ]; do sleep 0.02; done; exec "$@"' \
        sh "$TEST_TMP/go.$name" "$@"
}
guest_go() { touch "$TEST_TMP/go.$1"; }

backend_dom() {
    local name=$1 g=$2 dev=$3 file=$4
    shift 4
    local keys=() args=() kv
    while [ $# -gt 0 ] && [ "$1" != -- ]; do keys+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    args=("$@")
    local d script
    # BACKEND_RESTARTS=N: run the backend again when it dies, up to N times (as the
    # driver domain's agent does); otherwise the backend is the domain's main process.
    script='f=$1; shift; while [ ! -s "$f" ]; do sleep 0.02; done; be=$(cat "$f")'
    if [ "${BACKEND_RESTARTS:-0}" -gt 0 ]; then
        script="$script; for i in \$(seq 0 $BACKEND_RESTARTS); do \"\$@\" --backend \"\$be\"; sleep 0.1; done"
    else
        script="$script"'; exec "$@" --backend "$be"'
    fi
    d=$(new_dom "$name" sh -c "$script" sh "$TEST_TMP/go.$name" "$BLK_BACKEND" "${args[@]}") ||
        fail "backend_dom: create $name"
    local be fe
    be=$(be_dir "$d" "$g" "$dev")
    fe=${BE_FRONTEND:-$(fe_dir "$g" "$dev")}
    xenstore-write "$be/frontend" "$fe" "$be/frontend-id" "$g" "$be/online" 1 "$be/state" 1 \
        "$be/removable" 0 "$be/bootable" 1 "$be/dev" xvda "$be/type" phy "$be/mode" w \
        "$be/device-type" disk "$be/params" "$file" || fail "backend_dom: write $be"
    for kv in "${keys[@]}"; do
        xenstore-write "$be/${kv%%=*}" "${kv#*=}" || fail "backend_dom: write $be/${kv%%=*}"
    done
    xenstore-chmod -r "$be" "n$d" "r$g" || fail "backend_dom: chmod $be"
    echo "$be" >"$TEST_TMP/go.$name.be"
    [ -n "${BE_HOLD:-}" ] || backend_release "$name"
    echo "$d"
}
backend_release() { mv "$TEST_TMP/go.$1.be" "$TEST_TMP/go.$1"; }

frontend_add() {
    local g=$1 dev=$2 d=$3 fe
    fe=$(fe_dir "$g" "$dev")
    xenstore-write "$fe/backend" "$(be_dir "$d" "$g" "$dev")" "$fe/backend-id" "$d" \
        "$fe/state" 1 "$fe/virtual-device" "$dev" "$fe/device-type" disk \
        "$fe/shadow/generation" 0 || fail "frontend_add: write $fe"
    xenstore-chmod -r "$fe" "n$g" "r$d" || fail "frontend_add: chmod $fe"
}

rewire() {
    local g=$1 dev=$2 d=$3 fe gen
    fe=$(fe_dir "$g" "$dev")
    xenstore-write "$fe/backend" "$(be_dir "$d" "$g" "$dev")" "$fe/backend-id" "$d" ||
        fail "rewire: write $fe"
    xenstore-chmod -r "$fe" "n$g" "r$d" || fail "rewire: chmod $fe"
    gen=$(xenstore-read "$fe/shadow/generation" 2>/dev/null || echo 0)
    # One transaction: every backend before the new generation is fenced (destroyed).
    xenstore-write "$fe/shadow/generation" $((gen + 1)) "$fe/shadow/fenced" $((gen + 1)) ||
        fail "rewire: bump generation"
}

replace_backend() {
    local old=$1 new=$2 g=$3 dev=$4
    shift 4
    "$XENSIM" info "$old" >/dev/null 2>&1 && "$XENSIM" destroy "$old" >/dev/null
    local d
    d=$(backend_dom "$new" "$g" "$dev" "$@") || fail "replace_backend: $new"
    rewire "$g" "$dev" "$d"
    echo "$d"
}

fe_key() { xenstore-read "$(fe_dir "$1" "$2")/$3" 2>/dev/null || true; }

inject() {
    local d=$1
    shift
    _inject_seq=$((_inject_seq + 1))
    local k=/local/domain/$d/data/understudy/inject
    xenstore-write "$k" "$_inject_seq $*" && xenstore-chmod "$k" n0 "r$d" ||
        fail "inject: write $k"
}

sanitizer_check() {
    local f
    for f in "$@"; do
        if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$f" 2>/dev/null; then
            echo "FAIL: sanitizer report in $f:" >&2
            grep -B2 -A30 -E 'Sanitizer|runtime error' "$f" | head -60 >&2
            exit 1
        fi
    done
}

# The sanitizer runtimes, for the ASan-built plugin inside Debian's nbdkit, and the
# helper that makes ASan initialize first (tests/frontends/asan-initfirst.c).
asan_preload() {
    local a u h=$TPROG/frontends/asan-initfirst.so
    a=$(gcc -print-file-name=libasan.so)
    u=$(gcc -print-file-name=libubsan.so)
    [ -f "$a" ] && [ -f "$u" ] && [ -f "$h" ] || fail "sanitizer runtimes or $h missing"
    echo "$a:$u:$h"
}

# ---- scenarios with the instrumented driver (blkfe-driver) in the guest ----
#   driver_setup IMG_MIB [DRIVER-ARGS...] [-- BACKEND-KEYS... [-- BACKEND-ARGS...]]
#       sim, a guest running blkfe-driver on $DEV, a backend domain drv0 for $img;
#       sets guest, drv, cur (the backend domain's name), img
#   driver_done [SECONDS]      wait for the driver to finish; fail unless DRIVER-OK
#   fe_is KEY VALUE            the frontend dir holds KEY=VALUE
#   recoveries_at_least N
#   live_again N               wait (20 s) for shadow/recoveries >= N and state live
#   progress_after N           wait (20 s) for DRIVER-PROGRESS lines > N
#   destroy_faults N           N times: progress, the driver domain replaced, live again
#   backend_pid NAME           the pid of domain NAME's main process (the backend)
DEV=51712
_be_keys=() _be_args=()
driver_setup() {
    local mib=$1
    shift
    local dargs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do dargs+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    _be_keys=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do _be_keys+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    _be_args=("$@")
    start_sim
    on_exit '[ "$rc" -eq 0 ] || dump_logs'
    img=$TEST_TMP/disk.img
    truncate -s "${mib}M" "$img"
    guest=$(guest_dom guest "$DRIVER" --device "device/vbd/$DEV" --backing "$img" "${dargs[@]}")
    drv=$(backend_dom drv0 "$guest" "$DEV" "$img" "${_be_keys[@]}" -- "${_be_args[@]}")
    cur=drv0
    frontend_add "$guest" "$DEV" "$drv"
    guest_go guest
    wait_for 30 grep -q DRIVER-START "$TEST_TMP/guest.log"
}

# next_backend [KEY=VALUE...] [-- ARGS...]: replace $cur by a new domain (defaults: the
# setup's keys and args); sets cur and drv.
_nb=0
next_backend() {
    _nb=$((_nb + 1))
    local name=drv$_nb
    if [ $# -eq 0 ]; then
        drv=$(replace_backend "$cur" "$name" "$guest" "$DEV" "$img" "${_be_keys[@]}" -- \
            "${_be_args[@]}")
    else
        drv=$(replace_backend "$cur" "$name" "$guest" "$DEV" "$img" "$@")
    fi
    cur=$name
}

driver_done() {
    "$XENSIM" wait guest --until shutdown --timeout "${1:-120}" >/dev/null ||
        fail "the driver did not finish: $(tail -5 "$TEST_TMP/guest.log")"
    sanitizer_check "$TEST_TMP"/*.log
    grep -q '^DRIVER-OK' "$TEST_TMP/guest.log" ||
        fail "driver: $(grep -m1 -E 'DRIVER-FAIL|ERROR' "$TEST_TMP/guest.log" || tail -3 "$TEST_TMP/guest.log")"
    log "$(grep '^DRIVER-OK' "$TEST_TMP/guest.log")"
}

# destroy_faults N: N times, once the driver has made progress, its driver
# domain destroyed and replaced (next_backend), and the frontend live again.
destroy_faults() {
    local i
    for ((i = 1; i <= $1; i++)); do
        progress_after $((i + 1))
        next_backend
        live_again "$i"
        log "fault $i: driver domain destroyed, now $cur (domain $drv); $(fe_key "$guest" "$DEV" shadow/last-recovery)"
    done
}

fe_is() { [ "$(fe_key "$guest" "$DEV" "$1")" = "$2" ]; }
recoveries_at_least() { [ "$(fe_key "$guest" "$DEV" shadow/recoveries)" -ge "$1" ] 2>/dev/null; }
_live_n() { recoveries_at_least "$1" && fe_is shadow/state live; }
live_again() { wait_for 20 _live_n "$1"; }
_progress_gt() { [ "$(grep -c DRIVER-PROGRESS "$TEST_TMP/guest.log")" -gt "$1" ]; }
progress_after() { wait_for 20 _progress_gt "$1"; }
progress_count() { grep -c DRIVER-PROGRESS "$TEST_TMP/guest.log"; }
backend_pid() { "$XENSIM" info "$1" | sed -n 's/^pid=//p'; }
# last_recovery_ms: total= of shadow/last-recovery
last_recovery_ms() { fe_key "$guest" "$DEV" shadow/last-recovery | sed -n 's/.*total=\([0-9]*\).*/\1/p'; }

# dump_logs: the tails of the domain logs (on a failure; functions.sh keeps no logs).
dump_logs() {
    local f
    for f in "$TEST_TMP"/*.log; do
        [ -f "$f" ] || continue
        echo "---- $(basename "$f") (last 25 lines)" >&2
        tail -n 25 "$f" | cut -c1-240 >&2
    done
}

# ---- scenarios through NBD: nbdkit with the plugin in the guest, nbdfuse, loop, ext4 ----
#   nbd_setup IMG_MIB [PLUGIN-ARGS...] [-- BACKEND-KEYS... [-- BACKEND-ARGS...]]
#       sim; guest runs `nbdfuse $fuse/disk --command nbdkit -s PLUGIN device=...`;
#       drv0 serves $img; then losetup, mkfs.ext4 and mount at $mnt (from dom0)
#   workload_start SECONDS SEED   fs-workload.sh on $mnt in the background
#   workload_running              it still runs
#   workload_stop                 ask it to finish now
#   workload_done                 wait for it; fail unless WORKLOAD-OK
#   nbd_finish                    unmount, fsck, stop the export; fsck the backing
#                                 file itself and check every manifest entry on it
#   fault KIND                    one fault on $cur and its repair (destroy, kill, crash,
#                                 pause, corrupt); waits until live again
requires_nbd() {
    requires nbdkit nbdfuse losetup mkfs.ext4 fsck.ext4 mount umount sha256sum
    [ -e /dev/fuse ] || skip "no /dev/fuse"
    [ "$(id -u)" -eq 0 ] || skip "needs root for loop devices and mounts"
    [ -e "$PLUGIN" ] || fail "no plugin at $PLUGIN"
}

nbd_setup() {
    local mib=$1
    shift
    local pargs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do pargs+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    _be_keys=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do _be_keys+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    _be_args=("$@")
    requires_nbd
    start_sim
    on_exit '[ "$rc" -eq 0 ] || dump_logs'
    img=$TEST_TMP/disk.img
    truncate -s "${mib}M" "$img"
    fuse=$TEST_TMP/fuse
    mnt=$TEST_TMP/mnt
    mkdir -p "$fuse" "$mnt"
    # The ASan-built plugin needs the sanitizer runtimes in Debian's nbdkit.
    local pre=()
    if ldd "$PLUGIN" | grep -q libasan; then
        pre=(env "LD_PRELOAD=$(asan_preload)" "ASAN_OPTIONS=detect_leaks=1:exitcode=86")
    fi
    guest=$(guest_dom guest nbdfuse "$fuse/disk" --command "${pre[@]}" nbdkit -s -v \
        -D nbdkit.backend.datapath=0 "$PLUGIN" "device=device/vbd/$DEV" "${pargs[@]}")
    drv=$(backend_dom drv0 "$guest" "$DEV" "$img" "${_be_keys[@]}" -- "${_be_args[@]}")
    cur=drv0
    frontend_add "$guest" "$DEV" "$drv"
    on_exit _nbd_cleanup
    guest_go guest
    wait_for 30 test -e "$fuse/disk"
    loopdev=$(losetup -f --show "$fuse/disk") || fail "losetup $fuse/disk"
    mkfs.ext4 -q -F "$loopdev" || fail "mkfs.ext4 on $loopdev (NBD export)"
    mount -t ext4 "$loopdev" "$mnt" || fail "mount $loopdev"
    log "ext4 on $loopdev over nbdfuse over nbdkit over the shadow blkfront"
}

_nbd_cleanup() {
    [ -n "${wl_pid:-}" ] && kill "$wl_pid" 2>/dev/null
    mountpoint -q "$mnt" && { umount "$mnt" || umount -l "$mnt"; }
    [ -n "${loopdev:-}" ] && losetup -d "$loopdev" 2>/dev/null
    mountpoint -q "$fuse" && { umount "$fuse" || umount -l "$fuse"; }
    [ -d "$TEST_TMP/verify" ] && mountpoint -q "$TEST_TMP/verify" && umount "$TEST_TMP/verify"
    return 0
}

workload_start() {
    "$TOP/tests/frontends/fs-workload.sh" "$mnt" "$TEST_TMP/manifest" "$1" "$2" \
        >"$TEST_TMP/workload.out" 2>&1 &
    wl_pid=$!
}
workload_running() { kill -0 "$wl_pid" 2>/dev/null; }
workload_stop() { touch "$TEST_TMP/manifest.stop"; }
workload_done() {
    wait "$wl_pid"
    local st=$?
    wl_pid=
    grep -q WORKLOAD-OK "$TEST_TMP/workload.out" && [ $st -eq 0 ] ||
        fail "the workload saw an error: $(tail -3 "$TEST_TMP/workload.out")"
    log "$(tail -1 "$TEST_TMP/workload.out"); manifest $(wc -l <"$TEST_TMP/manifest") entries"
}

# Check the manifest against a mounted copy in DIR: the last entry of each name wins.
_check_manifest() {
    local d=$1 name sum bad=0 n=0
    while read -r name sum; do
        n=$((n + 1))
        if [ "$sum" = DELETED ]; then
            [ -e "$d/$name" ] && { echo "  $name: deleted, still there"; bad=$((bad + 1)); }
        else
            [ "$(sha256sum <"$d/$name" 2>/dev/null | cut -d' ' -f1)" = "$sum" ] ||
                { echo "  $name: contents differ from the fsynced version"; bad=$((bad + 1)); }
        fi
    done < <(awk '{last[$1] = $2} END {for (k in last) print k, last[k]}' "$TEST_TMP/manifest")
    [ $bad -eq 0 ] || fail "$bad of $n files wrong on $d"
    log "all $n files match their last fsynced version on $d"
}

nbd_finish() {
    umount "$mnt" || fail "umount $mnt"
    fsck.ext4 -fn "$loopdev" >"$TEST_TMP/fsck1.out" 2>&1 ||
        fail "fsck through NBD: $(tail -5 "$TEST_TMP/fsck1.out")"
    losetup -d "$loopdev" || fail "losetup -d $loopdev"
    loopdev=
    # The loop device lets go of the file asynchronously (and udev may still probe it).
    local i
    for ((i = 0; i < 100; i++)); do umount "$fuse" 2>/dev/null && break; sleep 0.1; done
    mountpoint -q "$fuse" && fail "umount $fuse: $(umount "$fuse" 2>&1)"
    "$XENSIM" wait guest --until shutdown --timeout 30 >/dev/null || fail "nbdkit did not exit"
    grep -q 'shutdown_reason=poweroff' < <("$XENSIM" info guest) ||
        fail "nbdfuse/nbdkit exited badly: $("$XENSIM" info guest | tr '\n' ' ')"
    sanitizer_check "$TEST_TMP"/*.log
    fsck.ext4 -fn "$img" >"$TEST_TMP/fsck2.out" 2>&1 ||
        fail "fsck of the backing file: $(tail -5 "$TEST_TMP/fsck2.out")"
    mkdir -p "$TEST_TMP/verify"
    mount -o ro,loop "$img" "$TEST_TMP/verify" || fail "mount the backing file"
    _check_manifest "$TEST_TMP/verify"
    umount "$TEST_TMP/verify"
    log "fsck clean through NBD and on the backing file"
}

report_seq() { fe_key "$guest" "$DEV" shadow/report | cut -d' ' -f1; }
_report_after() { [ "$(report_seq)" -gt "$1" ] 2>/dev/null; }
_nfault=0
fault() {
    local kind=$1 before seq pid
    before=$(fe_key "$guest" "$DEV" shadow/recoveries)
    seq=$(report_seq)
    seq=${seq:-0}
    case $kind in
    destroy) ;;
    kill)
        pid=$(backend_pid "$cur")
        [ -n "$pid" ] && [ "$pid" != 0 ] && kill -KILL "$pid"
        ;;
    crash) "$XENSIM" crash "$cur" >/dev/null || fail "xensim crash $cur" ;;
    pause)
        "$XENSIM" pause "$cur" || fail "xensim pause $cur"
        wait_for 20 _report_after "$seq"
        ;;
    corrupt)
        inject "$drv" corrupt 1
        wait_for 20 _report_after "$seq"
        ;;
    *) fail "fault: unknown kind $kind" ;;
    esac
    next_backend
    live_again $((before + 1))
    _nfault=$((_nfault + 1))
    log "fault $_nfault ($kind): '$(fe_key "$guest" "$DEV" shadow/report)'; $(fe_key "$guest" "$DEV" shadow/last-recovery)"
}
