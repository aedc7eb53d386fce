#!/usr/bin/env bash
# blkback in a driver domain completes the xenbus handshake with a test
# frontend in a guest, publishes the disk's size and features, and serves
# verified reads and writes, flush, barrier and discard; the data reaches the
# backing file; a close ends in state Closed on both sides.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
start_sim
drv=$(new_dom drv)
guest=$(new_dom guest)
img=$TEST_TMP/disk.img
truncate -s 64M "$img"
vbd_add "$guest" "$drv" 51712 "$img"
blkback_start "$drv" "$guest" 51712
be=$(vbd_be "$drv" "$guest" 51712)
wait_for 10 state_is "$drv" "$guest" 51712 2

expect_eq sectors "$(xenstore-read "$be/sectors")" 131072
expect_eq sector-size "$(xenstore-read "$be/sector-size")" 512
expect_eq info "$(xenstore-read "$be/info")" 0
for f in feature-flush-cache feature-barrier feature-discard feature-persistent; do
    expect_eq "$f" "$(xenstore-read "$be/$f")" 1
done
expect_eq feature-max-indirect-segments "$(xenstore-read "$be/feature-max-indirect-segments")" 256

blkfront "$guest" 51712 connect write 0 64 11 read 0 64 11 write 131000 72 12 read 131000 72 12 \
    flush barrier write 1000 16 13 discard 1000 8 readzero 1000 8 read 1008 8 13 close ||
    fail "frontend script failed"
expect_eq "backend state" "$(be_state "$drv" "$guest" 51712)" 6
# What the guest wrote is in the file, at the right place.
"$BLKFRONT" --check-file "$img" 0 64 11 || fail "file does not hold sectors 0..63"
"$BLKFRONT" --check-file "$img" 131000 72 12 || fail "file does not hold the last sectors"
"$BLKFRONT" --check-file "$img" 1000 8 zero || fail "discarded sectors are not zero"
grep -q 'state InitWait -> Connected' "$BB_LOG" || fail "no state change logged: $(cat "$BB_LOG")"
blkback_alive || fail "blkback exited"
exit 0
