#!/usr/bin/env bash
# A detach as libxl does it: the toolstack writes online=0 and state
# Closing into the backend dir; blkback goes Closing, follows the
# frontend to Closed and accepts no new connection; removing the backend
# dir then makes it exit 0.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
be=$(vbd_be "$drv" "$guest" $DEV)
out=$TEST_TMP/front.out
blkfront_bg "$out" "$guest" $DEV connect write 0 64 1 backend-state 5 close
said() { grep -q "$1" "$out"; }
wait_for 10 said 'ok: wrote'
xenstore-write "$be/online" 0 "$be/state" 5
wait "$FRONT_PID" || fail "frontend did not see the detach: $(cat "$out")"
wait_for 10 state_is "$drv" "$guest" $DEV 6
grep -q 'online=0' "$BB_LOG" || fail "detach not logged"
# No new connection on a detached device.
xenstore-write "$(vbd_fe "$guest" $DEV)/state" 1
sleep 0.5
expect_eq "state after a frontend retry" "$(be_state "$drv" "$guest" $DEV)" 6
xenstore-rm "$be"
blkback_wait_exit 10
expect_eq "blkback exit status" "$BB_RC" 0
"$BLKFRONT" --check-file "$img" 0 64 1 || fail "data written before the detach lost"
exit 0
