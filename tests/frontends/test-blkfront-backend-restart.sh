#!/usr/bin/env bash
# The backend process dies (SIGKILL) and is restarted inside the same driver
# domain, as the domain's agent does: the same backend dir goes back to
# InitWait. The frontend notices (backend-restarted, or the deadline of what
# was in flight), reconnects to the same backend with fresh grants and
# replays; no toolstack involved, no generation bump.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
FAULTS=5
export BACKEND_RESTARTS=$FAULTS
driver_setup 64 --seconds 20 --threads 4 --region-mib 16 --deadline-ms 2000 --seed 15 -- \
    cache=volatile
ready() { [ "$(grep -c TESTBACK-READY "$TEST_TMP/drv0.log")" -ge "$1" ]; }
for ((i = 1; i <= FAULTS; i++)); do
    progress_after $((i + 1))
    pid=$(grep TESTBACK-READY "$TEST_TMP/drv0.log" | tail -1 | sed 's/.*pid=\([0-9]*\).*/\1/')
    kill -KILL "$pid" || fail "kill the backend process $pid"
    wait_for 10 ready $((i + 1))
    live_again "$i"
    log "kill $i (pid $pid): '$(fe_key "$guest" "$DEV" shadow/report)'; $(fe_key "$guest" "$DEV" shadow/last-recovery)"
done
driver_done
expect_eq "generation (no toolstack)" "$(fe_key "$guest" "$DEV" shadow/generation)" 0
expect_eq "recoveries" "$(fe_key "$guest" "$DEV" shadow/recoveries)" "$FAULTS"
grep -q 'backend-restarted: backend went back to' "$TEST_TMP/guest.log" ||
    fail "no restart was seen through the backend's state"
exit 0
