#!/usr/bin/env bash
# xenevtchn_fd is readable exactly while an event is pending for the handle;
# a non-blocking fd makes xenevtchn_pending fail with EAGAIN.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$EVT_CHECK" poll "${doms[@]}" || fail "poll check failed"
exit 0
