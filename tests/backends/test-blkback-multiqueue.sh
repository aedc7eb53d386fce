#!/usr/bin/env bash
# Two queues (multi-queue-num-queues=2, queue-N/ keys), with two-page rings
# and persistent grants: requests spread over both rings, each answered on
# its own ring, data verified.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
be=$(vbd_be "$drv" "$guest" $DEV)
expect_eq multi-queue-max-queues "$(xenstore-read "$be/multi-queue-max-queues")" 4
blkfront "$guest" $DEV --queues 2 --order 1 --persistent connect write 0 8192 31 read 0 8192 31 \
    flush close || fail "two queues failed"
grep -q '2 queue(s) of 2 page(s), persistent grants on' "$BB_LOG" || fail "2 queues not logged"
blkfront "$guest" $DEV --queues 4 --indirect connect write 100 9000 32 read 100 9000 32 close ||
    fail "four queues failed"
"$BLKFRONT" --check-file "$img" 100 9000 32 || fail "file does not hold the data"
out=$(blkfront "$guest" $DEV --queues 5 --timeout 5 connect 2>&1) && fail "5 queues accepted"
blkback_alive || fail "blkback exited"
exit 0
