#!/usr/bin/env bash
# Share pages from one domain's process and map them in another's: data written
# on either side is seen on the other, through multi-page and single-page maps.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$GNT_CHECK" share-map "${doms[@]}" || fail "share-map check failed"
exit 0
