#!/usr/bin/env bash
# Unit tests of the netfront's neighbour probe budget across a recovery
# (net-neigh-test.c over nf_neigh.c, on a directory laid out as
# /proc/sys/net): recorded and put back exactly, the guest's own changes
# kept, errors logged and nothing raised, the start-up repair of a budget a
# killed netfront left raised.
source "$(dirname "$0")/../functions.sh"
[ -x "$TPROG/frontends/net-neigh-test" ] || fail "no $TPROG/frontends/net-neigh-test"
TMPDIR=$TEST_TMP "$TPROG/frontends/net-neigh-test" || fail "net-neigh-test failed"
exit 0
