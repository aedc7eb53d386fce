#!/usr/bin/env bash
# Only the granted domain can map or copy a grant: a third domain, the granting
# domain itself, and dom0 get EINVAL (map) and GNTST_general_error (copy).
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2 3; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$GNT_CHECK" only-granted "${doms[@]}" || fail "only-granted check failed"
exit 0
