#!/usr/bin/env bash
# Delivery masks the port until xenevtchn_unmask: events while masked are
# pending, coalesced, and delivered on unmask; an unmask with nothing pending
# delivers nothing; each port is delivered once.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$EVT_CHECK" mask "${doms[@]}" || fail "mask check failed"
exit 0
