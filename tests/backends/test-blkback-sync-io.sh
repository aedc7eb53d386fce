#!/usr/bin/env bash
# The preadv/pwritev fallback (what runs where io_uring is unavailable)
# serves the same requests as io_uring, with cache=none and writeback.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup -- --io sync
blkfront "$guest" $DEV --indirect --queues 2 connect write 0 4096 71 read 0 4096 71 flush barrier \
    discard 0 8 readzero 0 8 close || fail "sync engine, cache=none"
grep -q 'io sync, cache none' "$BB_LOG" || fail "sync engine not in use"
xenstore-write "$(vbd_be "$drv" "$guest" $DEV)/cache" writeback
kill -TERM "$BB_PID"
blkback_wait_exit 10
expect_eq "exit status after SIGTERM" "$BB_RC" 0
expect_eq "state after SIGTERM" "$(be_state "$drv" "$guest" $DEV)" 6
blkback_start "$drv" "$guest" $DEV --io sync
blkfront "$guest" $DEV --seg 1:5 connect read 8 4000 71 write 9000 500 72 read 9000 500 72 close ||
    fail "sync engine, cache=writeback"
grep -q 'io sync, cache writeback' "$BB_LOG" || fail "writeback not in use"
"$BLKFRONT" --check-file "$img" 9000 500 72 || fail "file does not hold the writeback data"
exit 0
