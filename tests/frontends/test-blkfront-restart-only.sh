#!/usr/bin/env bash
# The shadow blkfront's restart-only mode (shadow=restart, the application
# table's restart column: tests/campaign): its driver domain destroyed three
# times mid-I/O, the frontend reconnects to each new one, but as a stock
# driver that restarts - every request outstanding at the fault, and every
# one made while there is no backend, fails with EIO; nothing is replayed.
# The workload allows EIO and only EIO (a failed write's sectors become
# unknown), must see some, and must then be served again: reads return the
# last acknowledged data, the final read-back and the backing file agree.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
FAULTS=3
driver_setup 64 --restart-only --seconds 15 --threads 4 --region-mib 24 --deadline-ms 2000 --seed 5
destroy_faults "$FAULTS"
driver_done
expect_eq "recoveries" "$(fe_key "$guest" "$DEV" shadow/recoveries)" "$FAULTS"
grep -q "recoveries=$FAULTS eio=[1-9]" "$TEST_TMP/guest.log" || fail "no request failed: $(grep DRIVER-OK "$TEST_TMP/guest.log")"
grep -q 'restart only: [0-9]* requests failed with EIO' "$TEST_TMP/guest.log" ||
    fail "no isolation line says what failed"
grep -q 'restart only: nothing replayed' "$TEST_TMP/guest.log" || fail "no reconnect line in restart-only mode"
if grep -q 'replaying [1-9]' "$TEST_TMP/guest.log"; then fail "a request was replayed"; fi
exit 0
