#!/usr/bin/env bash
# cache=volatile: writes are acknowledged from blkback's memory and reach
# the file only when a flush (or barrier) completes. Reads see held
# writes. On SIGKILL, acknowledged-but-unflushed writes are lost and
# flushed ones are not - the disk-with-a-volatile-cache behaviour the
# shadow frontend must survive.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup cache=volatile
out=$TEST_TMP/front.out
# A: flushed. B: flushed by a barrier. C: acknowledged, never flushed.
blkfront_bg "$out" "$guest" $DEV --timeout 60 connect write 0 256 1 flush write 1024 64 2 \
    barrier write 2048 128 3 read 2048 128 3 read 0 256 1 sleep 60000
fpid=$FRONT_PID
read_done() { [ "$(grep -c 'ok: read' "$out")" -ge 2 ]; }
wait_for 20 read_done
cat "$out"
grep -q 'cache volatile' "$BB_LOG" || fail "volatile cache not in use"
"$BLKFRONT" --check-file "$img" 0 256 1 || fail "flushed data A not in the file"
"$BLKFRONT" --check-file "$img" 1024 64 2 || fail "barrier-flushed data B not in the file"
"$BLKFRONT" --check-file "$img" 2048 128 zero || fail "unflushed data C reached the file early"
kill -KILL "$BB_PID"
wait "$BB_PID" 2>/dev/null
"$BLKFRONT" --check-file "$img" 2048 128 zero || fail "unflushed data C survived SIGKILL"
"$BLKFRONT" --check-file "$img" 0 256 1 || fail "flushed data A lost"
# A new blkback serves what the file holds: A and B, no C.
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
blkback_start "$drv" "$guest" $DEV
blkfront "$guest" $DEV connect read 0 256 1 read 1024 64 2 readzero 2048 128 close ||
    fail "after restart the disk is not what was flushed"
# A clean stop (SIGTERM) writes held data back, as a disk does at power-off.
blkfront "$guest" $DEV connect write 4096 64 4 close || fail "write before SIGTERM failed"
kill -TERM "$BB_PID"
blkback_wait_exit 10
expect_eq "exit status after SIGTERM" "$BB_RC" 0
"$BLKFRONT" --check-file "$img" 4096 64 4 || fail "SIGTERM lost held writes"
exit 0
