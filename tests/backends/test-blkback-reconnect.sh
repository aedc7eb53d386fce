#!/usr/bin/env bash
# A frontend that goes back to Initialising (as one does after a recovery)
# gets a fresh connection from the same blkback: the backend returns to
# InitWait, unmaps the old rings and grants, accepts new rings with other
# parameters, and the data written before is intact.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
blkfront "$guest" $DEV --persistent connect write 0 1024 41 reconnect read 0 1024 41 \
    write 2048 256 42 reconnect reconnect read 2048 256 42 read 0 1024 41 ||
    fail "reconnect with the same parameters failed"
# New parameters on the next connection: two queues, bigger rings.
blkfront "$guest" $DEV --queues 2 --order 2 connect read 0 1024 41 read 2048 256 42 close ||
    fail "connection with new parameters failed"
n=$(grep -c 'state InitWait -> Connected' "$BB_LOG")
[ "$n" -ge 5 ] || fail "expected at least 5 connections, saw $n"
[ "$(grep -c 'disconnected from' "$BB_LOG")" -ge 5 ] || fail "old connections not torn down"
blkback_alive || fail "blkback exited"
exit 0
