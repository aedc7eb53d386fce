#!/usr/bin/env bash
# xengnttab_set_max_grants bounds what one handle maps at once (ENOMEM past
# it, room again after unmapping; E2BIG above gntdev's limit); other handles
# have their own.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$GNT_CHECK" max-grants "${doms[@]}" || fail "max-grants check failed"
exit 0
