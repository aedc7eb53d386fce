#!/usr/bin/env bash
# The shadow blkfront against Understudy's blkback (backends/, written
# independently against the same blkif protocol): connect, verified I/O,
# and recovery across destroyed and killed driver domains and injected
# corrupt responses, with blkback's volatile cache.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
[ -x "$BUILD/bin/blkback" ] || skip "blkback not built"
export BLK_BACKEND=$BUILD/bin/blkback
driver_setup 64 --seconds 22 --threads 4 --region-mib 16 --flush-every 100 --deadline-ms 2000 \
    --seed 19 -- cache=volatile
n=0
for kind in destroy kill destroy corrupt destroy; do
    progress_after $((n * 2 + 2))
    n=$((n + 1))
    before=$(fe_key "$guest" "$DEV" shadow/recoveries)
    case $kind in
    kill) kill -KILL "$(backend_pid "$cur")" ;;
    corrupt)
        inject "$drv" corrupt 1
        wait_for 15 recoveries_at_least $((before + 1))
        ;;
    esac
    next_backend
    live_again $((before + 1))
    log "$kind: '$(fe_key "$guest" "$DEV" shadow/report)'; $(fe_key "$guest" "$DEV" shadow/last-recovery)"
done
driver_done
grep -q 'failed: bad-response' "$TEST_TMP/guest.log" || fail "blkback's corrupt response went unnoticed"
exit 0
