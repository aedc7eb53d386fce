#!/usr/bin/env bash
# A hot standby for the disk (schema.md, "The hot standby's connection"): the shadow
# blkfront holds a second, idle connection to a standby blkback domain, made in a slot of
# its frontend dir. While the verifying workload (4 threads of writes, reads checked
# against the last acknowledged write, flushes; blkback's volatile cache, so acknowledged
# writes live only in the journal until a flush) runs, a stand-in toolstack crashes the
# serving domain FAULTS times (default 4) and promotes the standby each time (pause,
# FE/backend to the slot's backend, generation), then attaches a fresh one in the other
# slot: slot-a, slot-b, slot-a, ...
#   - each recovery is a switch: "switched to the standby connection", no handshake
#     ("reconnected to" never logged), with writes in flight at the fault;
#   - the standby's blkback got no request before its promotion: its process made no
#     read or write call from the moment it was idle until the fault (/proc/PID/io), and
#     its ring says so at the promotion (0 requests issued on it, its backend's rsp_prod 0);
#   - zero loss: the driver sees no error, every read returns the last acknowledged data,
#     and the final read-back and the backing file hold every acknowledged write;
#   - the grant budget: the guest's gntalloc limit is 252, what the default 1024 leaves
#     beside a NIC with its standby (772): the disk and its standby fit in it.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
source "$(dirname "$0")/blk-standby-functions.sh"
[ -x "$BUILD/bin/blkback" ] || skip "blkback not built"
export BLK_BACKEND=$BUILD/bin/blkback
FAULTS=${FAULTS:-4}
export XENSIM_GNTALLOC_LIMIT=252
driver_setup 64 --seconds $((8 + FAULTS * 3)) --threads 4 --region-mib 16 --flush-every 100 \
    --deadline-ms 2000 --seed 29 -- cache=volatile
fe=$(fe_dir "$guest" "$DEV")
glog() { grep "$@" "$TEST_TMP/guest.log"; }
IDLE_RING="standby transport promoted: 0 requests issued and 0 notifications sent on it before;"
IDLE_RING="$IDLE_RING its backend's rsp_prod 0,"
attach_standby drv1 slot-a
slot=slot-a next=slot-b old=$fe
# The failed connection's ring keys leave its dir the turn after the switch (blk_forget).
_old_keys_gone() { ! xenstore-read "$old/event-channel" >/dev/null 2>&1; }
for ((i = 1; i <= FAULTS; i++)); do
    progress_after $((i * 2 + 1))
    calls=$(io_calls "$sb_name")
    [ "$calls" = "$sb_calls" ] ||
        fail "fault $i: the standby's blkback made $((calls - sb_calls)) read/write calls while idle"
    "$XENSIM" crash "$cur" >/dev/null || fail "xensim crash $cur"
    promote_standby "$cur" "$sb"
    live_again "$i"
    log "fault $i: $cur crashed, standby $sb_name (domain $sb) in $slot promoted:" \
        "$(fe_key "$guest" "$DEV" shadow/last-recovery)"
    expect_eq "switches after fault $i" "$(glog -c 'switched to the standby connection')" "$i"
    expect_eq "idle standby rings promoted" "$(glog -c "$IDLE_RING")" "$i"
    fault_line=$(glog -E '\(domain [0-9]+\) failed: ' | tail -1)
    inflight=$(sed -n 's/.*replay (\([0-9]*\) in flight.*/\1/p' <<<"$fault_line")
    [ "${inflight:-0}" -gt 0 ] || fail "fault $i: no write in flight at the crash: $fault_line"
    log "fault $i: $inflight requests in flight at the crash"
    expect_eq "FE/state once the live connection left FE" "$(xenstore-read "$fe/state")" 6
    wait_for 5 _old_keys_gone
    old=$fe/shadow/$slot
    cur=$sb_name drv=$sb
    attach_standby "drv$((i + 1))" "$next"
    t=$slot slot=$next next=$t
done
# The last standby, never promoted, is dropped when the toolstack takes it away: its keys
# leave the slot; detached (its backend dir removed, as the toolstack does), its blkback
# counts what it served: nothing.
xenstore-rm "$fe/shadow/standby"
_dropped() { ! xenstore-read "$fe/shadow/$slot/event-channel" >/dev/null 2>&1; }
wait_for 5 _dropped
xenstore-rm "$(be_dir "$sb" "$guest" "$DEV")"
wait_for 5 grep -q 'disconnected from' "$TEST_TMP/$sb_name.log"
grep -q 'served 0 requests' "$TEST_TMP/$sb_name.log" ||
    fail "the dropped standby's blkback: $(grep served "$TEST_TMP/$sb_name.log")"
xenstore-rm "$fe/shadow/$slot"
driver_done
glog -q 'reconnected to' && fail "a recovery handshook: $(glog -m1 'reconnected to')"
glog -q 'No space left' && fail "over the grant budget: $(glog -m1 'No space left')"
log "grants: $(glog 'standby: shared a' | tail -1 | sed 's/.*standby: //')"
expect_eq "recoveries" "$(fe_key "$guest" "$DEV" shadow/recoveries)" "$FAULTS"
grep -q "recoveries=$FAULTS" "$TEST_TMP/guest.log" || fail "the driver saw a different count"
exit 0
