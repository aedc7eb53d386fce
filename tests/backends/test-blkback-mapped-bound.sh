#!/usr/bin/env bash
# One frontend cannot make blkback hold more than BB_MAPPED_MAX (4096) pages
# of its requests mapped: four 16-page rings full of 256-segment indirect
# reads (2048 requests, 524288 pages asked for) pushed at once are all
# answered OKAY, and blkback's disconnect line says it never held more than
# 4096 pages at once (before the bound: every request was mapped as it was
# taken off the ring).
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
out=$(blkfront "$guest" $DEV --queues 4 --order 4 --indirect --timeout 120 connect flood 256 flush close 2>&1) || fail "flood failed: $out"
grep -q 'ok: flood: 2048 reads of 256 segments on 4 queue(s), all OKAY' <<<"$out" ||
    fail "not the flood asked for: $out"
wait_for 10 grep -q 'at most [0-9]* pages of requests mapped at once' "$BB_LOG"
peak=$(grep -o 'at most [0-9]* pages of requests mapped at once' "$BB_LOG" | tail -n 1 | awk '{print $3}')
log "blkback held at most $peak pages mapped"
[ "$peak" -ge 256 ] || fail "peak $peak: the flood was not served"
[ "$peak" -le 4096 ] || fail "blkback held $peak pages mapped at once, over its bound of 4096"
blkback_alive || fail "blkback exited"
exit 0
