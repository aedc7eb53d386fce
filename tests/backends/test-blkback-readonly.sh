#!/usr/bin/env bash
# mode=r: info says read-only, no barrier or discard offered; reads work,
# writes are refused with ERROR, barriers with EOPNOTSUPP, discards with
# EOPNOTSUPP; the file is opened read-only and never changes.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
start_sim
drv=$(new_dom drv)
guest=$(new_dom guest)
img=$TEST_TMP/disk.img
truncate -s 4M "$img"
"$BLKFRONT" --fill-file "$img" 0 8192 61 >/dev/null
chmod 0444 "$img"
vbd_add "$guest" "$drv" $DEV "$img" mode=r
blkback_start "$drv" "$guest" $DEV
wait_for 10 state_is "$drv" "$guest" $DEV 2
be=$(vbd_be "$drv" "$guest" $DEV)
expect_eq info "$(xenstore-read "$be/info")" 4
expect_eq feature-barrier "$(xenstore-read "$be/feature-barrier")" 0
expect_eq feature-discard "$(xenstore-read "$be/feature-discard")" 0
blkfront "$guest" $DEV connect read 0 8192 61 expect write:0:8 -1 expect barrier -2 \
    expect discard:0:8 -2 expect flush 0 read 0 8 61 close || fail "read-only disk misbehaved"
"$BLKFRONT" --check-file "$img" 0 8192 61 || fail "read-only disk changed"
exit 0
