#!/usr/bin/env bash
# Unbinding: the port is gone for the handle (ENOTCONN), the peer's port is
# unbound again (its events dropped) and can be bound again; ports are reused
# lowest first; closing a handle closes its ports.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$EVT_CHECK" unbind "${doms[@]}" || fail "unbind check failed"
exit 0
