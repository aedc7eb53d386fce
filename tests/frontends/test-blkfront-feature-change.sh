#!/usr/bin/env bash
# Each new backend may offer other features; the frontend uses what each
# offers and replays across the change: indirect segments and a 4-page ring,
# then a 1-page ring without indirect segments or persistent grants (longer
# requests are cut again), then barriers instead of flushes, then a
# write-through disk with neither, then a 16-page ring with 256 segments (a grant
# budget of 512 per connection: the default, 216, holds no ring of 16 pages beside a
# 256-segment request).
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
driver_setup 64 --seconds 22 --threads 4 --region-mib 24 --flush-every 50 --deadline-ms 2000 \
    --seed 17 --max-ring-order 4 --max-indirect 256 --max-grants 512 -- cache=volatile
configs=("cache=volatile -- --max-ring-order 0 --max-indirect 0 --no-persistent"
    "cache=volatile -- --no-flush --barrier"
    "cache=none -- --no-discard"
    "cache=volatile -- --max-ring-order 4 --max-indirect 256")
for ((i = 1; i <= ${#configs[@]}; i++)); do
    progress_after $((i * 3))
    # shellcheck disable=SC2086
    next_backend ${configs[$((i - 1))]}
    live_again "$i"
    log "backend $i (${configs[$((i - 1))]}): $(fe_key "$guest" "$DEV" shadow/last-recovery)"
done
driver_done
grep -q 'shared a 1-page ring (32 requests)' "$TEST_TMP/guest.log" || fail "no 1-page ring"
grep -q 'disk 131072 sectors, sector-size 512; 11 segments per request; flush 1, barrier 0' \
    "$TEST_TMP/guest.log" || fail "no connection without indirect segments"
grep -q 'flush 0, barrier 1' "$TEST_TMP/guest.log" || fail "no barrier-only connection"
grep -q 'write-through' "$TEST_TMP/guest.log" || fail "no write-through connection"
grep -q '256 segments per request (indirect)' "$TEST_TMP/guest.log" || fail "no 256-segment connection"
grep -q 'shared a 16-page ring (512 requests)' "$TEST_TMP/guest.log" || fail "no 16-page ring"
exit 0
