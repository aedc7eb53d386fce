#!/usr/bin/env bash
# A client that never reads its socket neither blocks other clients nor makes
# the store hold an unbounded backlog for it: watch events past the bound
# (xenstored's memory quota, 2.5 MiB) are dropped, the connection is kept,
# and requests are simply not read while 20 replies wait (quota_req_outstanding).
source "$(dirname "$0")/xs-functions.sh"
start_sim
timeout 120 "$XRAW" flood || fail "flood"
timeout 60 "$XRAW" pipeline || fail "pipelined requests"
timeout 120 "$XRAW" backpressure || fail "requests without reading replies"
g=$(new_dom g)
as_dom $g timeout 60 "$XRAW" pipeline || fail "pipelined requests from a guest"
exit 0
