#!/usr/bin/env bash
# When a process dies its ports close: the peer's port becomes unbound (no
# event) and a new process of the dead one's domain can bind it again.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$EVT_CHECK" death "${doms[@]}" || fail "death check failed"
exit 0
