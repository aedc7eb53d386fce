#!/usr/bin/env bash
# Indirect requests (feature-max-indirect-segments=256) carry up to 256
# segments through indirect pages: a 4 MiB transfer, with full-page and
# with sub-page segments, reads back verified and lands in the file.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
blkfront "$guest" $DEV --indirect connect write 8 8192 21 read 8 8192 21 close ||
    fail "frontend (full pages) failed"
"$BLKFRONT" --check-file "$img" 8 8192 21 || fail "file does not hold the indirect writes"
# Sub-page segments: sectors 3..5 of every page (not 512-aligned in memory for 4K O_DIRECT).
blkfront "$guest" $DEV --indirect --seg 3:3 connect write 20001 3000 22 read 20001 3000 22 \
    read 8 8192 21 close || fail "frontend (sub-page segments) failed"
"$BLKFRONT" --check-file "$img" 20001 3000 22 || fail "file does not hold the sub-page writes"
# And sub-page direct requests.
blkfront "$guest" $DEV --seg 7:1 connect write 30000 77 23 read 30000 77 23 close ||
    fail "frontend (one-sector segments) failed"
"$BLKFRONT" --check-file "$img" 30000 77 23 || fail "file does not hold the one-sector writes"
blkback_alive || fail "blkback exited"
exit 0
