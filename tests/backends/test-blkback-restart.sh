#!/usr/bin/env bash
# blkback killed with SIGKILL and a new one started on the same backend dir:
# the new process finds the old incarnation's state (Connected), resets to
# InitWait without touching the frontend's stale rings, and the frontend
# reconnects to it; data written before the kill is intact.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
out=$TEST_TMP/front.out
blkfront_bg "$out" "$guest" $DEV --timeout 30 connect write 0 2048 51 flush await-restart \
    read 0 2048 51 write 4096 64 52 read 4096 64 52 close
fpid=$FRONT_PID
has_flushed() { grep -q 'ok: flush' "$out"; }
wait_for 20 has_flushed
old=$BB_PID
kill -KILL "$old"
wait "$old" 2>/dev/null
kill -0 "$old" 2>/dev/null && fail "blkback $old survived SIGKILL"
log "killed blkback $old; backend state left at $(be_state "$drv" "$guest" $DEV)"
blkback_start "$drv" "$guest" $DEV
wait $fpid || fail "frontend failed: $(cat "$out")"
cat "$out"
grep -q 'earlier backend; resetting' "$BB_LOG" || fail "new blkback did not see the old state"
grep -q 'Connected to an earlier backend' "$BB_LOG" || fail "stale frontend state not noticed"
"$BLKFRONT" --check-file "$img" 0 2048 51 || fail "data lost"
exit 0
