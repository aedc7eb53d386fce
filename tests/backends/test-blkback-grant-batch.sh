#!/usr/bin/env bash
# A fresh connection's first requests map their persistent grants together:
# 23 writes of 11 pages pushed at once (253 pages, none cached) cost
# ceil(253 / 128) = 2 map calls, not 253, and are reused by what follows.
# A ref that cannot be mapped, in the middle of such a batch, fails only the
# requests that use it (BLKIF_RSP_ERROR, logged with the ref); the others
# land, the bad ones write nothing, and the pages mapped stay in the cache.
# The same for the indirect segment pages a pass reads in one map.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
pgline() { grep 'persistent grants:' "$BB_LOG" | grep served | tail -1; }
calls() { pgline | sed -E 's/.* maps in ([0-9]+) calls.*/\1/'; }
maps() { pgline | sed -E 's/.*persistent grants: [0-9]+ mapped, ([0-9]+) maps.*/\1/'; }

# A clean batch: 2 calls for 253 pages; the read-back maps nothing more.
blkfront "$guest" $DEV --persistent connect batch 23 - 5 read 0 2024 5 close ||
    fail "clean batch failed"
wait_for 10 grep -q 'served' "$BB_LOG"
log "$(pgline)"
grep -m1 'first answer' "$BB_LOG" | grep -q '(23 taken; persistent grants: 253 pages mapped in 2 calls)' ||
    fail "first pass not mapped in 2 calls: $(grep -m1 'first answer' "$BB_LOG")"
expect_eq "pages mapped" "$(maps)" 253
expect_eq "map calls" "$(calls)" 2
"$BLKFRONT" --check-file "$img" 0 2024 5 || fail "file does not hold the batch"

# Requests 3 and 17 each carry one bad data ref: they alone fail.
truncate -s 0 "$img" && truncate -s 64M "$img"
blkfront "$guest" $DEV --persistent connect batch 23 3,17 6 read 0 264 6 readzero 264 88 \
    read 352 1144 6 readzero 1496 88 read 1584 440 6 close || fail "batch with bad refs failed"
wait_for 10 test "$(grep -c 'served' "$BB_LOG")" -ge 2
log "$(pgline)"
expect_eq "refused with the bad ref" "$(grep -c 'grant ref 8388592 cannot be mapped' "$BB_LOG")" 2
first=$(grep 'first answer' "$BB_LOG" | sed -n 2p)
log "$first"
# Each bad ref is found by halving its batch (128 or 125 refs): 15 calls each, not 253.
grep -qE '\(23 taken; persistent grants: 251 pages mapped in [0-9]+ calls\)' <<<"$first" ||
    fail "not the first pass expected: $first"
n=$(sed -E 's/.* in ([0-9]+) calls.*/\1/' <<<"$first")
[ "$n" -le 32 ] || fail "$n map calls for a batch with 2 bad refs"
grep 'served' "$BB_LOG" | tail -1 | grep -q '(2 refused or failed)' ||
    fail "not the requests refused: $(grep served "$BB_LOG" | tail -1)"

# Indirect: requests 1 and 6 of 8 name an indirect page that cannot be mapped.
truncate -s 0 "$img" && truncate -s 64M "$img"
blkfront "$guest" $DEV --persistent --indirect connect batch 8 1,6 7 read 0 88 7 readzero 88 88 \
    read 176 352 7 readzero 528 88 read 616 88 7 close || fail "indirect batch failed"
wait_for 10 test "$(grep -c 'served' "$BB_LOG")" -ge 3
expect_eq "refused for their indirect page" \
    "$(grep -c 'indirect segment pages cannot be mapped' "$BB_LOG")" 2
grep 'served' "$BB_LOG" | tail -1 | grep -q '(2 refused or failed)' ||
    fail "not the requests refused: $(grep served "$BB_LOG" | tail -1)"
blkback_alive || fail "blkback exited"
exit 0
