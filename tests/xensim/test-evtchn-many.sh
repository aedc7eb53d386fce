#!/usr/bin/env bash
# Many channels at once (1500): every port is delivered exactly once, and a
# process holding more doorbells than the usual 1024-fd soft limit still binds.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
a=$(new_dom a) || fail "create a"
b=$(new_dom b) || fail "create b"
"$EVT_CHECK" many "$a" "$b" || fail "many check failed"
exit 0
