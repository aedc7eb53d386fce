#!/usr/bin/env bash
# No unmap-notify from a domain that is destroyed or shut down: a dead
# domain's kernel does nothing, so when the mapper's domain is destroyed, or
# shut down (its processes killed, the domain kept), the sharer's view stays
# untouched (no event, mapper byte still set); and likewise for the mapper when
# the sharer's domain is destroyed.
source "$(dirname "$0")/hyp-functions.sh"
start_sim

# quiet LOG DEAD_LOG: the end writing LOG saw no notify; the end writing DEAD_LOG is gone.
quiet() {
    local pid
    pid=$(pid_in "$2")
    for ((i = 0; i < 200; i++)); do alive "$pid" || break; sleep 0.05; done
    alive "$pid" && fail "the dead domain's process $pid still runs"
    sleep 1
    stop_pair
    has "$1" '^SUMMARY events=0 peer_byte=1' || fail "a notify from a dead domain"
}

notify_pair p1
"$XENSIM" destroy "$b" || fail "destroy the mapper's domain"
quiet "$SOUT" "$MOUT"

notify_pair p2
"$XENSIM" shutdown "$b" || fail "shut down the mapper's domain"
quiet "$SOUT" "$MOUT"

notify_pair p3
"$XENSIM" destroy "$a" || fail "destroy the sharer's domain"
quiet "$MOUT" "$SOUT"

no_sanitizer_reports "$TEST_TMP"/p*.log
exit 0
