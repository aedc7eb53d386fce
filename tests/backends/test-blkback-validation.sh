#!/usr/bin/env bash
# Every kind of malformed request (tests/backends/tbad.c: bad op, segment
# counts, sector ranges, overflowing ranges, unmappable grants, bad
# indirect pages and segments, bad discards) is answered with the status
# blkif.h calls for and its id echoed; blkback stays alive, logs (rate
# limited), touches nothing on the disk, and serves a good request after.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
size=$(stat -c %s "$img")
"$BLKFRONT" --fill-file "$img" 0 131072 77 >/dev/null || fail "cannot fill the disk"
blkfront "$guest" $DEV connect bad-all || fail "a malformed request got the wrong answer"
blkback_alive || fail "blkback died"
# Twice as many, on a persistent connection (a different mapping path).
blkfront "$guest" $DEV --persistent connect bad-all bad-all || fail "persistent: wrong answer"
blkback_alive || fail "blkback died"
"$BLKFRONT" --check-file "$img" 0 131072 77 || fail "a refused request changed the disk"
expect_eq "file size" "$(stat -c %s "$img")" "$size"
grep -q 'refused (ERROR)' "$BB_LOG" || fail "no log line for refused requests"
grep -q 'refused (EOPNOTSUPP): unknown operation' "$BB_LOG" || fail "no log line for unknown op"
n=$(grep -c refused "$BB_LOG")
[ "$n" -le 45 ] || fail "refusals not rate limited: $n lines"
blkfront "$guest" $DEV connect write 64 8 78 read 64 8 78 close || fail "good request after bad ones"
exit 0
