#!/usr/bin/env bash
# A disk with 4096-byte logical sectors: the frontend keeps blkif's
# 512-byte units on the wire, works in 4 KiB blocks, and recovers as well.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
driver_setup 64 --seconds 12 --threads 4 --region-mib 16 --deadline-ms 2000 --seed 18 -- \
    cache=volatile -- --sector-size 4096
grep -q 'sector-size=4096' "$TEST_TMP/guest.log" || fail "not 4096-byte sectors"
for i in 1 2 3; do
    progress_after $((i * 2))
    next_backend
    live_again "$i"
done
driver_done
exit 0
