#!/usr/bin/env bash
# xengnttab_grant_copy: gref->local, local->gref and gref->gref with offsets,
# in both directions between domains; per-segment GNTST_* statuses for bad
# refs, unknown domains and read-only destinations; whole-call EINVAL for
# offset+len past the page or local->local; a revoked grant is never reached.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$GNT_CHECK" copy "${doms[@]}" || fail "copy check failed"
exit 0
