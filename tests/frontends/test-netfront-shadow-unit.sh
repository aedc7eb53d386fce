#!/usr/bin/env bash
# Unit tests of the netfront's pure parts: the shadow (net-shadow-test.c: the
# multicast list parser, the receive filter, when the backend is asked to filter)
# and the offload conversions (net-offload-test.c).
source "$(dirname "$0")/../functions.sh"
for t in net-shadow-test net-offload-test; do
    [ -x "$TPROG/frontends/$t" ] || fail "no $TPROG/frontends/$t"
    "$TPROG/frontends/$t" || fail "$t failed"
done
exit 0
