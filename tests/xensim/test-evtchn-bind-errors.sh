#!/usr/bin/env bash
# Errors as Xen and Linux's evtchn driver give them: ESRCH for no such domain,
# EINVAL for port 0, free, out-of-range, bound or foreign ports and unknown
# virqs, ENOTCONN for ports of another handle, EOPNOTSUPP for fdopen.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2 3; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$EVT_CHECK" errors "${doms[@]}" || fail "errors check failed"
exit 0
