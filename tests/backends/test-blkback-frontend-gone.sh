#!/usr/bin/env bash
# The frontend's domain is destroyed mid-connection (its store subtree and
# grants go with it): blkback sees the frontend gone, unmaps everything
# (persistent grants included), goes Closed and waits for the toolstack,
# which removes the backend dir: blkback exits 0, sanitizer-clean.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
out=$TEST_TMP/front.out
blkfront_bg "$out" "$guest" $DEV --persistent connect write 0 256 1 sleep 60000
said() { grep -q "$1" "$out"; }
wait_for 10 said 'ok: wrote'
"$XENSIM" destroy "$guest" || fail "xensim destroy $guest failed"
wait_for 10 state_is "$drv" "$guest" $DEV 6
grep -q 'frontend gone' "$BB_LOG" || fail "frontend loss not logged"
grep 'persistent grants:' "$BB_LOG" | tail -1 | grep -q '32 mapped' ||
    fail "persistent grants not released: $(grep 'persistent grants:' "$BB_LOG")"
blkback_alive || fail "blkback exited when its frontend went away"
xenstore-rm "$(vbd_be "$drv" "$guest" $DEV)"
blkback_wait_exit 10
expect_eq "blkback exit status" "$BB_RC" 0
"$BLKFRONT" --check-file "$img" 0 256 1 || fail "acknowledged data lost"
exit 0
