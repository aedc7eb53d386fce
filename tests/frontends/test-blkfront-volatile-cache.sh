#!/usr/bin/env bash
# A backend whose writes sit in a volatile cache (lost when its domain is
# destroyed) loses nothing the guest was told is written: the frontend keeps
# every acknowledged write since the last completed flush and replays it on
# the new backend. The workload flushes rarely, so much is at stake each time.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
FAULTS=8
driver_setup 64 --seconds 25 --threads 4 --region-mib 24 --flush-every 200 --deadline-ms 2000 \
    --seed 12 -- cache=volatile
destroy_faults "$FAULTS"
driver_done
grep -q 'cache=2' "$TEST_TMP/drv0.log" || fail "the backend did not run with a volatile cache"
expect_eq "recoveries" "$(fe_key "$guest" "$DEV" shadow/recoveries)" "$FAULTS"
exit 0
