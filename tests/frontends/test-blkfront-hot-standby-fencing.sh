#!/usr/bin/env bash
# When is a failed disk driver domain fenced? (DESIGN.md, "Standby": a pause stops its vcpus,
# but I/O it already handed on can still land.) The guest (blkfe-fence: the shadow blkfront
# library) rewrites one 64 KiB block with numbered versions, one write in flight at a time.
# Some driver domains reach the disk through slow storage outside themselves - nbdkit's
# file plugin with WDELAY s per write (delay filter) under nbdfuse, as a SAN would be: a
# write they hand on completes there whatever becomes of them. The standbys use the file.
#
#   round 1, a hot switch with a write still on its way (the brief's case): drv0 (slow
#     storage) is paused just after it handed a write on; the standby drv1 is promoted at
#     once. The frontend holds the replayed write (it overlaps what drv0 had outstanding)
#     until FE/shadow/fenced reaches the switch's generation, while another thread's reads
#     and writes elsewhere go on. drv0 runs again for a second and is destroyed; its
#     handed-on write lands at the storage meanwhile; only once the storage has drained
#     does the stand-in toolstack write FE/shadow/fenced. The held write then goes to drv1,
#     the guest writes on, and the block holds the last acknowledged version. (Before the
#     frontend held it, that late write landed after 57 acknowledged versions and
#     overwrote them.)
#   round 2, the toolstack's other order: drv2 (slow storage) paused just after handing a
#     write on, destroyed, and only once the storage has no request of it outstanding (the
#     log filter's count) is the standby drv3 promoted; the block holds the last
#     acknowledged version.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
source "$(dirname "$0")/blk-standby-functions.sh"
private_mounts "$@"
requires nbdkit nbdfuse umount
[ -e /dev/fuse ] || skip "no /dev/fuse"
[ "$(id -u)" -eq 0 ] || skip "needs root for the FUSE mount"
[ -x "$BUILD/bin/blkback" ] || skip "blkback not built"
export BLK_BACKEND=$BUILD/bin/blkback
FENCE=$TPROG/frontends/blkfe-fence
[ -x "$FENCE" ] || fail "no $FENCE"
WDELAY=3
start_sim
on_exit '[ "$rc" -eq 0 ] || dump_logs'
img=$TEST_TMP/disk.img
ctl=$TEST_TMP/fence
iolog=$TEST_TMP/storage-io.log
mkdir -p "$ctl" "$TEST_TMP/slow"
truncate -s 16M "$img"

# The slow storage: the same file, every write WDELAY s late.
nbdkit -U "$TEST_TMP/slow.sock" -P "$TEST_TMP/nbdkit.pid" --filter=log --filter=delay \
    file "$img" "wdelay=$WDELAY" "logfile=$iolog" || fail "nbdkit"
_slow_cleanup() {
    mountpoint -q "$TEST_TMP/slow" && { umount "$TEST_TMP/slow" || umount -l "$TEST_TMP/slow"; }
    [ -s "$TEST_TMP/nbdkit.pid" ] && kill "$(cat "$TEST_TMP/nbdkit.pid")" 2>/dev/null
    return 0
}
on_exit _slow_cleanup
nbdfuse "$TEST_TMP/slow/disk" --unix "$TEST_TMP/slow.sock" &
wait_for 10 test -e "$TEST_TMP/slow/disk"
slow=$TEST_TMP/slow/disk
# Requests the storage has started and not finished (the log filter: "Write id=N ..." at
# the start, "...Write id=N return=" at the end).
outstanding() {
    local s e
    s=$(grep -cE 'connection=[0-9]+ (Write|Flush|Trim|Zero|Pread) id=' "$iolog")
    e=$(grep -cE 'connection=[0-9]+ \.\.\.(Write|Flush|Trim|Zero|Pread) id=' "$iolog")
    echo $((s - e))
}
drained() { [ "$(outstanding)" -eq 0 ]; }

guest=$(guest_dom guest "$FENCE" --device "device/vbd/$DEV" --control "$ctl" --backing "$img" \
    --rounds 2 --deadline-ms 10000 --side-mib 8)
drv=$(backend_dom drv0 "$guest" "$DEV" "$slow")
cur=drv0
frontend_add "$guest" "$DEV" "$drv"
guest_go guest
wait_for 30 grep -q FENCE-START "$TEST_TMP/guest.log"

progress_n() { grep -c '^FENCE-PROGRESS' "$TEST_TMP/guest.log"; }
_progress_gt() { [ "$(progress_n)" -gt "$1" ]; }
acked() { grep '^FENCE-PROGRESS' "$TEST_TMP/guest.log" | tail -1 | sed 's/.*acked=\([0-9]*\).*/\1/'; }
_acked_ge() { [ "$(acked)" -ge "$1" ] 2>/dev/null; }
field() { grep "^FENCE-READ $1 " "$TEST_TMP/guest.log" | sed -n "s/.* $2=\\([^ ]*\\).*/\\1/p"; }
# pause_after_handoff DOM: once the guest has a new acknowledgement (its next write is
# then on its way to DOM's slow storage), pause DOM; prints the version acknowledged.
pause_after_handoff() {
    local n
    n=$(progress_n)
    wait_for $((WDELAY * 3)) _progress_gt "$n"
    "$XENSIM" pause "$1" >/dev/null || fail "xensim pause $1"
    [ "$(outstanding)" -ge 1 ] || fail "$1 paused with nothing at the storage"
    acked
}
# hold N: the guest stops writing (before anything late can land: it would be overwritten).
hold() {
    touch "$ctl/hold.$1"
    wait_for 10 grep -q "^FENCE-HOLD $1 " "$TEST_TMP/guest.log"
    log "round $1: $(grep "^FENCE-HOLD $1 " "$TEST_TMP/guest.log") at $(date +%T.%N | cut -c1-12)"
}
# read_back N: once the storage is drained, the guest reads the block (round N).
read_back() {
    wait_for $((WDELAY * 3)) drained
    touch "$ctl/read.$1"
    wait_for 10 grep -q "^FENCE-READ $1 " "$TEST_TMP/guest.log"
    log "round $1: $(grep "^FENCE-READ $1 " "$TEST_TMP/guest.log")"
}

# ---- round 1: a hot switch; the replayed write held until the toolstack says fenced ----
side_ops() { grep '^FENCE-SIDE' "$TEST_TMP/guest.log" | tail -1 | sed 's/.*ops=\([0-9]*\).*/\1/'; }
_side_ge() { [ "$(side_ops)" -ge "$1" ] 2>/dev/null; }
side_max_ms() { grep '^FENCE-SIDE' "$TEST_TMP/guest.log" | sed -n "$1,\$ s/.*max-ms=//p" | sort -n | tail -1; }
glog() { grep "$@" "$TEST_TMP/guest.log"; }
attach_standby drv1 slot-a "params=$img"
wait_for $((WDELAY * 3)) _progress_gt 1
before=$(pause_after_handoff drv0)
log "round 1: drv0 paused at $(date +%T.%N | cut -c1-12) with version $((before + 1)) handed to its storage"
promote_standby drv0 "$sb" keep
live_again 1
wait_for 10 glog -q 'fence: requests held: '
log "round 1: $(glog -m1 'fence: requests held: ' | sed 's/.*fence: /fence: /')"
log "round 1: switched to drv1: $(fe_key "$guest" "$DEV" shadow/last-recovery)"
# Reads and writes elsewhere while the block's write is held.
touch "$ctl/side"
wait_for 10 _side_ge 20
side0=$(side_ops) side_line0=$(glog -c '^FENCE-SIDE')
"$XENSIM" unpause drv0 >/dev/null || fail "xensim unpause drv0"
sleep 1
"$XENSIM" destroy drv0 >/dev/null || fail "xensim destroy drv0"
log "round 1: drv0 ran again for 1 s and was destroyed at $(date +%T.%N | cut -c1-12);" \
    "storage requests outstanding: $(outstanding)"
wait_for $((WDELAY * 3)) drained
log "round 1: storage drained at $(date +%T.%N | cut -c1-12)"
expect_eq "round 1: versions acknowledged while unfenced" "$(acked)" "$before"
held_line=$(glog 'fence: requests still held' | tail -1)
[ "$(side_ops)" -gt $((side0 + 20)) ] ||
    fail "round 1: the side thread's reads and writes stalled while the block's write was held"
log "round 1: meanwhile the side thread did $(($(side_ops) - side0)) reads and writes elsewhere," \
    "the slowest $(side_max_ms $((side_line0 + 1))) ms; the block's version $((before + 1)) held${held_line:+ ($held_line)}"
fenced_to "$sw_gen"
log "round 1: FE/shadow/fenced := $sw_gen at $(date +%T.%N | cut -c1-12)"
wait_for 10 _acked_ge $((before + 20))
glog -q "fence: shadow/fenced=$sw_gen: every failed backend is fenced" ||
    fail "round 1: no release logged: $(glog 'fence:' | tail -2)"
log "round 1: $(glog -m1 'every failed backend is fenced' | sed 's/.*fence: /fence: /')"
rm -f "$ctl/side"
hold 1
read_back 1
grep -E "(Write|\.\.\.Write) id=" "$iolog" | tail -4 | sed 's/^/#   storage: /'
acked1=$(field 1 acked) dev1=$(field 1 device) back1=$(field 1 backing)
expect_eq "round 1: the device's block" "$dev1" "$acked1"
expect_eq "round 1: the file's block" "$back1" "$acked1"
log "round 1: drv0's late write of version $((before + 1)) landed before the fence was lifted;" \
    "the block holds the last acknowledged version, $acked1"

# ---- round 2: fenced = destroyed and nothing of it outstanding at the storage ----
attach_standby drv2 slot-b "params=$slow"
promote_standby drv1 "$sb" # drv1 healthy, on the file: nothing of it can land late
live_again 2
attach_standby drv3 slot-a "params=$img"
wait_for $((WDELAY * 3)) _progress_gt "$(progress_n)"
before=$(pause_after_handoff drv2)
"$XENSIM" destroy drv2 >/dev/null || fail "xensim destroy drv2"
log "round 2: drv2 paused with version $((before + 1)) at its storage, destroyed;" \
    "$(outstanding) storage requests outstanding"
wait_for $((WDELAY * 3)) drained
log "round 2: storage drained at $(date +%T.%N | cut -c1-12): drv2 fenced; promoting drv3"
promote_standby drv2 "$sb"
live_again 3
wait_for 10 _acked_ge $((before + 20))
hold 2
read_back 2
acked2=$(field 2 acked) dev2=$(field 2 device) back2=$(field 2 backing)
expect_eq "round 2: the device's block" "$dev2" "$acked2"
expect_eq "round 2: the file's block" "$back2" "$acked2"
"$XENSIM" wait guest --until shutdown --timeout 20 >/dev/null || fail "blkfe-fence did not finish"
grep -q '^FENCE-OK' "$TEST_TMP/guest.log" || fail "blkfe-fence: $(grep -m1 FENCE-FAIL "$TEST_TMP/guest.log")"
sanitizer_check "$TEST_TMP"/*.log
exit 0
