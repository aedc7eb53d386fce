#!/usr/bin/env bash
# A multi-ref map is one contiguous range with each page in request order,
# across several shares and past one request's worth of refs (253).
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$GNT_CHECK" multipage "${doms[@]}" || fail "multipage check failed"
exit 0
