#!/usr/bin/env bash
# xenevtchn_restrict: only once (EACCES), not to dom0 or reserved ids
# (EINVAL); a restricted handle can bind only interdomain with that domain
# (EACCES otherwise) and keeps ports bound before.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2 3; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$EVT_CHECK" restrict "${doms[@]}" || fail "restrict check failed"
exit 0
