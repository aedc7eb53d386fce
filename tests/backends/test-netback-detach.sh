#!/usr/bin/env bash
# Detach as the toolstack does it, and the guest's death. online=0 while
# connected: Closing, then Closed with the frontend, no new connection;
# removing the backend dir: netback exits 0, its TAP gone. A guest domain
# destroyed while connected: netback sees its frontend gone (Closed) and
# serves a new guest on a new backend dir (new process).
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup
be=$(vif_be "$drv" "$guest" $DEV)
tap=vif$guest.$DEV
out=$TEST_TMP/front.out
netfront_bg "$out" "$guest" $DEV connect wait-file "$TEST_TMP/go" close
wait_line "$out" '^ok: connected' 20
xenstore-write "$be/online" 0
wait_for 10 vif_state_is "$drv" "$guest" $DEV 5
touch "$TEST_TMP/go"
wait $FRONT_PID || fail "frontend: $(cat "$out")"
wait_for 10 vif_state_is "$drv" "$guest" $DEV 6
xenstore-rm "$be"
netback_wait_exit 10
expect_eq "netback exit status" "$NB_RC" 0
in_d ip link show "$tap" >/dev/null 2>&1 && fail "$tap still there"

# The guest dies while connected.
g2=$(new_dom guest2)
vif_add "$g2" "$drv" $DEV
netback_start "$drv" "$g2" $DEV
wait_for 10 vif_state_is "$drv" "$g2" $DEV 2
netfront_bg "$out" "$g2" $DEV connect sleep 100000
wait_line "$out" '^ok: connected' 20
"$XENSIM" destroy "$g2" || fail "destroy guest2"
wait_for 10 vif_state_is "$drv" "$g2" $DEV 6
grep -q "frontend gone" "$NB_LOG" || fail "netback did not see the frontend go"
netback_alive || fail "netback exited with its guest"
in_d ip link show "vif$g2.$DEV" >/dev/null 2>&1 && fail "TAP of the dead guest still there"
exit 0
