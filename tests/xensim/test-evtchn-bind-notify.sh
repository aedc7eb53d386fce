#!/usr/bin/env bash
# An interdomain channel: bind_unbound_port in one domain, bind_interdomain in
# the other (which gets Xen's initial event), events both ways, loopback.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$EVT_CHECK" basic "${doms[@]}" || fail "basic check failed"
exit 0
