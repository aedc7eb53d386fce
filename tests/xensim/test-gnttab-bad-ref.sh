#!/usr/bin/env bash
# Bad refs, reserved refs, unknown domains, revoked grants, wrong unmap
# addresses or counts, bad counts and unbound notify ports are error returns
# (EINVAL), never crashes; an existing mapping outlives its grant's revocation;
# refs are not reused at once.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$GNT_CHECK" bad-ref "${doms[@]}" || fail "bad-ref check failed"
exit 0
