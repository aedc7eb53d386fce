#!/usr/bin/env bash
# Unit tests of the netfront's pure parts: the shadow (net-shadow-test.c: the
# multicast list parser, the receive filter, when the backend is asked to filter),
# the offload conversions (net-offload-test.c) and the liveness probe
# (net-probe-test.c: its schedule and address, and its request on a tx ring) and
# the RARP a promoted hot standby announces our MAC with (net-announce-test.c).
source "$(dirname "$0")/../functions.sh"
for t in net-shadow-test net-offload-test net-probe-test net-announce-test; do
    [ -x "$TPROG/frontends/$t" ] || fail "no $TPROG/frontends/$t"
    "$TPROG/frontends/$t" || fail "$t failed"
done
exit 0
