#!/usr/bin/env bash
# With feature-persistent on both ends, blkback keeps each data page mapped
# after first use and reuses the mapping: repeated transfers through the
# same pages cost no new maps, data stays right, and every mapping is
# dropped on disconnect.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
blkfront "$guest" $DEV --persistent connect write 0 512 1 read 0 512 1 write 0 512 2 \
    read 0 512 2 write 4096 88 3 read 4096 88 3 read 0 512 2 close || fail "frontend failed"
grep -q 'persistent grants on' "$BB_LOG" || fail "persistent grants not negotiated"
line=$(grep 'persistent grants:' "$BB_LOG" | tail -1)
log "$line"
mapped=$(sed -E 's/.*persistent grants: ([0-9]+) mapped, ([0-9]+) maps.*/\1/' <<<"$line")
maps=$(sed -E 's/.*persistent grants: ([0-9]+) mapped, ([0-9]+) maps.*/\2/' <<<"$line")
# 512 sectors = 64 pages, reused by every transfer; 88 sectors = 11 of the same pages.
[ "$maps" -ge 64 ] && [ "$maps" -le 80 ] || fail "expected ~64 persistent maps, got $maps"
expect_eq "mappings held at disconnect" "$mapped" "$maps"
# Without the frontend's consent there are none.
blkfront "$guest" $DEV connect write 0 64 4 read 0 64 4 close || fail "frontend failed"
grep 'persistent grants:' "$BB_LOG" | tail -1 | grep -q ' 0 maps' || fail "non-persistent frontend got persistent maps"
blkback_alive || fail "blkback exited"
exit 0
