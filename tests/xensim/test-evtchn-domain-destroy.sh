#!/usr/bin/env bash
# When a domain is destroyed its ports close: the peer's interdomain port
# becomes unbound, for the dead domain (nobody else can bind it), and no event
# is sent; the peer's handle keeps working.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
a=$(new_dom a) || fail "create a"
c=$(new_dom c) || fail "create c"
W=$TEST_TMP/w
mkdir -p "$W"
b=$(in_dom b "$EVT_CHECK" hold "$W" "$a") || fail "create b"
"$EVT_CHECK" peer-gone "$W" "$a" "$b" "$c" >"$W/a.out" 2>&1 &
checker=$!
wait_for 20 has "$W/a.out" '^READY'
"$XENSIM" destroy "$b" || fail "destroy"
touch "$W/destroyed"
wait "$checker" || fail "peer-gone check failed: $(cat "$W/a.out")"
cat "$W/a.out"
no_sanitizer_reports "$W/a.out" "$TEST_TMP/b.log"
exit 0
