#!/usr/bin/env bash
# The shadow blkfront survives its driver domain being destroyed mid-I/O:
# each time, a harness toolstack starts a new driver domain and rewires the
# frontend in place (generation bump); the verifying workload (ASan-built
# frontend library in the guest) sees no error, reads always return the last
# acknowledged data, and the backing file holds every acknowledged write.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
FAULTS=8
driver_setup 64 --seconds 25 --threads 4 --region-mib 24 --deadline-ms 2000 --seed 11
destroy_faults "$FAULTS"
driver_done
expect_eq "recoveries" "$(fe_key "$guest" "$DEV" shadow/recoveries)" "$FAULTS"
expect_eq "generation" "$(fe_key "$guest" "$DEV" shadow/generation)" "$FAULTS"
expect_eq "state" "$(fe_key "$guest" "$DEV" shadow/state)" live
grep -q "recoveries=$FAULTS" "$TEST_TMP/guest.log" || fail "the driver saw a different count"
exit 0
