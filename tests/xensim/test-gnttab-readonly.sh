#!/usr/bin/env bash
# A read-only grant cannot be mapped writable (EINVAL); a read-only mapping
# faults on write (checked in a child), cannot be mprotect()ed writable, takes
# no clear-byte notify, and grant copy into a read-only grant fails.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$GNT_CHECK" readonly "${doms[@]}" || fail "readonly check failed"
exit 0
