#!/usr/bin/env bash
# A guest domain holds at most 256 xenstore connections: of 300 opened, the
# store serves at most 256 and closes the rest (each would have brought its
# own transaction, outstanding-request and output-memory quotas), logging
# it; once one is closed a new one is served; dom0 has no such limit, and
# the daemon and the store are whole afterwards.
source "$(dirname "$0")/xs-functions.sh"
start_sim
g=$(new_dom g)
out=$(as_dom $g timeout 60 "$XRAW" many-conns 2>&1) || fail "many-conns: $out"
log "$out"
grep -q "dom$g holds 256 connections, the most a domain may" "$XENSIM_DIR/xensimd.log" ||
    fail "the refusal was not logged"
timeout 60 "$XRAW" pipeline || fail "dom0 after the guest's connections"
expect_eq "the guest's store" "$(as_dom $g xenstore-read name)" g
exit 0
