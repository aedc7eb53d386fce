# shellcheck shell=bash
# tests/sim/disk-functions.sh - the disk class on xensim with shadowd doing all
# detection, restart and rewiring. Source after tests/functions.sh,
# tests/dom0/dom0-functions.sh and tests/frontends/rewire-functions.sh.
#
#   (and rewire-functions.sh's private_mounts "$@" first: see there)
#   disk_setup CACHE [PLUGIN-ARGS...]
#       sim; shadowd with one driver domain "disk" (DISK_DOM; understudy-agent + blkback,
#       fast timeouts, no restart backoff); a guest "guest" running nbdkit with
#       the (possibly ASan-built) plugin on a unix socket; nbdfuse attaches it
#       in dom0 (in our namespace); the vbd as libxl writes it, backend
#       cache=CACHE; losetup, mkfs.ext4, mount at $mnt. Sets guest, drv, img,
#       fuse, mnt, loopdev (for rewire-functions.sh's workload_*).
#   disk_finish     unmount, fsck through NBD, detach, stop nbdkit cleanly (the
#                   guest powers off), fsck the backing file and check every
#                   manifest entry on it
#   sd_fault KIND   one fault on the current driver domain (crash, kill, pause,
#                   hang, corrupt); waits until shadowd has a new domain up and
#                   the frontend is live again
#   nhist           recoveries in shadowd's history
BLKBACK=$BUILD/bin/blkback
DISK_DOM=${DISK_DOM:-disk}

disk_setup() {
    local cache=$1
    shift
    requires jq
    requires_nbd
    [ -x "$BLKBACK" ] || skip "blkback not built"
    start_sim
    on_exit '[ "$rc" -eq 0 ] || dump_logs'
    sd_conf "report-budget 1000" "report-window 10m"
    sd_domain "$DISK_DOM" "command $AGENT --handler vbd=$BLKBACK --heartbeat-ms 100" "heartbeat-timeout 1s" \
        "backoff-initial 0ms" "backoff-max 100ms" "stable-after 1s" "restart-budget 64" \
        "restart-window ${SD_RESTART_WINDOW:-1m}"
    sd_start
    drv=$(sd_wait_up "$DISK_DOM")
    img=$TEST_TMP/disk.img
    truncate -s 256M "$img"
    fuse=$TEST_TMP/fuse
    mnt=$TEST_TMP/mnt
    mkdir -p "$fuse" "$mnt"
    local pre=()
    if ldd "$PLUGIN" | grep -c libasan >/dev/null; then # not -q: ldd's SIGPIPE
        pre=(env "LD_PRELOAD=$(asan_preload)" "ASAN_OPTIONS=detect_leaks=1:exitcode=86")
    fi
    sock=$TEST_TMP/nbd.sock
    guest=$(guest_dom guest "${pre[@]}" nbdkit -f -v -D nbdkit.backend.datapath=0 -U "$sock" \
        "$PLUGIN" "device=device/vbd/$DEV" "$@")
    dev_add "$guest" "$drv" "$DEV" params="$img" cache="$cache"
    on_exit _nbd_cleanup
    guest_go guest
    wait_for 30 test -S "$sock"
    nbdfuse "$fuse/disk" --unix "$sock" >>"$TEST_TMP/nbdfuse.log" 2>&1 &
    fuse_pid=$!
    on_exit "kill $fuse_pid 2>/dev/null"
    wait_for 30 test -e "$fuse/disk"
    loopdev=$(losetup -f --show "$fuse/disk") || fail "losetup $fuse/disk"
    mkfs.ext4 -q -F "$loopdev" || fail "mkfs.ext4 on $loopdev"
    mount -t ext4 "$loopdev" "$mnt" || fail "mount $loopdev"
    wait_for 10 sd_recorded_is "$DISK_DOM" 1
    log "ext4 on $loopdev over the shadow blkfront ($*) over blkback (cache=$cache) in domain $drv"
}

nhist() { sdctl history --json | jq length; }
_hist_ge() { [ "$(nhist)" -ge "$1" ]; }
_live_ge() {
    [ "$(fe_key "$guest" "$DEV" shadow/state)" = live ] &&
        [ "$(fe_key "$guest" "$DEV" shadow/recoveries)" -ge "$1" ] 2>/dev/null
}
_new_domain_up() { sd_state_is disk up && [ "$(sd_domid disk)" != "$1" ]; }
# sd_fault KIND: one fault on the current driver domain; waits for shadowd to
# have restarted and rewired it and for the frontend to be live again.
sd_fault() {
    local kind=$1 h rec d pgid
    h=$(nhist)
    rec=$(fe_key "$guest" "$DEV" shadow/recoveries)
    d=$(sd_domid disk)
    case $kind in
    crash) "$XENSIM" crash "$d" >/dev/null || fail "xensim crash $d" ;;
    kill)
        pgid=$("$XENSIM" info "$d" | sed -n 's/^pid=//p')
        [ -n "$pgid" ] || fail "no process for domain $d"
        kill -KILL -- "-$pgid"
        ;;
    pause) "$XENSIM" pause "$d" || fail "xensim pause $d" ;;
    hang) sdctl inject disk backend-hang >/dev/null || fail "shadowctl inject backend-hang" ;;
    corrupt) sdctl inject disk corrupt 1 >/dev/null || fail "shadowctl inject corrupt" ;;
    *) fail "sd_fault: unknown kind $kind" ;;
    esac
    wait_for 30 _hist_ge $((h + 1))
    wait_for 30 _new_domain_up "$d"
    wait_for 30 _live_ge $((rec + 1))
}


disk_finish() {
    local i
    umount "$mnt" || fail "umount $mnt"
    fsck.ext4 -fn "$loopdev" >"$TEST_TMP/fsck1.out" 2>&1 ||
        fail "fsck through NBD: $(tail -5 "$TEST_TMP/fsck1.out")"
    losetup -d "$loopdev" || fail "losetup -d $loopdev"
    loopdev=
    # The loop device lets go of the file asynchronously.
    for ((i = 0; i < 100; i++)); do umount "$fuse" 2>/dev/null && break; sleep 0.1; done
    mountpoint -q "$fuse" && fail "umount $fuse: $(umount "$fuse" 2>&1)"
    wait "$fuse_pid" || fail "nbdfuse exited $?: $(tail -3 "$TEST_TMP/nbdfuse.log")"
    kill -TERM "$("$XENSIM" info guest | sed -n 's/^pid=//p')" || fail "no nbdkit in the guest"
    "$XENSIM" wait guest --until shutdown --timeout 30 >/dev/null || fail "nbdkit did not exit"
    grep -q 'shutdown_reason=poweroff' < <("$XENSIM" info guest) ||
        fail "nbdkit exited badly: $("$XENSIM" info guest | tr '\n' ' ')"
    sanitizer_check "$TEST_TMP"/*.log
    fsck.ext4 -fn "$img" >"$TEST_TMP/fsck2.out" 2>&1 ||
        fail "fsck of the backing file: $(tail -5 "$TEST_TMP/fsck2.out")"
    mkdir -p "$TEST_TMP/verify"
    mount -o ro,loop "$img" "$TEST_TMP/verify" || fail "mount the backing file"
    _check_manifest "$TEST_TMP/verify"
    umount "$TEST_TMP/verify"
    log "fsck clean through NBD and on the backing file"
}

# The shadow blkfront library under blkfe-driver's verifying workload
# (tests/frontends), without nbdkit, for tests with several guests:
#   drv_guest NAME DEVID SECONDS SEED [DRIVER-ARGS...]
#       a guest NAME running blkfe-driver on device/vbd/DEVID with its own
#       backing file $TEST_TMP/NAME.img (64 MiB) and --backing check; it waits
#       for $TEST_TMP/NAME.go before it opens the device (the vbd must exist
#       first: see drv_guest_go). Prints the domid. Log: $TEST_TMP/NAME.log.
#   drv_guest_go NAME   let it start; waits for its DRIVER-START
#   drv_progress NAME   how many DRIVER-PROGRESS lines it has printed
#   drv_writes NAME     writes= of its last DRIVER-PROGRESS line (0 before one)
#   drv_guest_finish NAME [SEC]  waits for the workload to end; fails unless it
#                       printed DRIVER-OK (no error, every acknowledged write
#                       read back and found on the backing file)
BLKFE_DRIVER=$TPROG/frontends/blkfe-driver
drv_guest() {
    local name=$1 devid=$2 secs=$3 seed=$4
    shift 4
    [ -x "$BLKFE_DRIVER" ] || skip "the shadow blkfront's test driver (tests/frontends) not built"
    truncate -s 64M "$TEST_TMP/$name.img"
    new_dom "$name" sh -c 'i=0; while [ ! -e "$1" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
        shift; exec "$@"' sh "$TEST_TMP/$name.go" "$BLKFE_DRIVER" --device "device/vbd/$devid" \
        --backing "$TEST_TMP/$name.img" --seconds "$secs" --seed "$seed" "$@"
}
drv_guest_go() {
    touch "$TEST_TMP/$1.go"
    wait_for 30 grep -q DRIVER-START "$TEST_TMP/$1.log"
}
drv_progress() { grep -c DRIVER-PROGRESS "$TEST_TMP/$1.log"; }
drv_writes() {
    local w
    w=$(grep DRIVER-PROGRESS "$TEST_TMP/$1.log" | tail -1 | sed -n 's/.*writes=\([0-9]*\).*/\1/p')
    echo "${w:-0}"
}
drv_guest_finish() {
    "$XENSIM" wait "$1" --until shutdown --timeout "${2:-60}" >/dev/null ||
        fail "$1: the workload did not finish: $(tail -3 "$TEST_TMP/$1.log")"
    grep -q '^DRIVER-OK' "$TEST_TMP/$1.log" ||
        fail "$1: $(grep -m1 -E 'DRIVER-FAIL|ERROR' "$TEST_TMP/$1.log" || tail -3 "$TEST_TMP/$1.log")"
    log "$1: $(grep '^DRIVER-OK' "$TEST_TMP/$1.log")"
}
