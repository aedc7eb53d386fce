#!/usr/bin/env bash
# Many channels at once (1500): more pending deliveries than one event socket
# holds wait in the daemon, and every port is delivered exactly once.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
a=$(new_dom a) || fail "create a"
b=$(new_dom b) || fail "create b"
"$EVT_CHECK" many "$a" "$b" || fail "many check failed"
exit 0
