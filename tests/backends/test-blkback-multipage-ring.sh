#!/usr/bin/env bash
# Rings of 2^order pages (ring-page-order up to max-ring-page-order=4), and
# ring-ref0 with ring-page-order=0, all serve verified I/O; an order above
# the maximum is refused with an error node.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
be=$(vbd_be "$drv" "$guest" $DEV)
expect_eq max-ring-page-order "$(xenstore-read "$be/max-ring-page-order")" 4
for o in 1 2 4; do
    blkfront "$guest" $DEV --order $o connect write 0 4096 $o read 0 4096 $o close ||
        fail "order $o failed"
done
grep -q '1 queue(s) of 16 page(s)' "$BB_LOG" || fail "no 16-page ring logged"
blkfront "$guest" $DEV --write-order connect write 0 64 9 read 0 64 9 close ||
    fail "ring-page-order=0 with ring-ref0 failed"
out=$(blkfront "$guest" $DEV --order 5 --timeout 5 connect 2>&1) && fail "order 5 accepted: $out"
log "order 5: $out"
xenstore-read "$be/error" | grep -q ring-page-order || fail "no error node for order 5"
blkback_alive || fail "blkback exited"
exit 0
