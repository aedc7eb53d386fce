#!/usr/bin/env bash
# Watch events respect permissions (xenstored's watch_permitted): a watcher
# gets an event only if its domain may read the node or the node's parent, or
# could read the node before a permission change took that away.
source "$(dirname "$0")/xs-functions.sh"
start_sim
g=$(new_dom g)
xc "write /pp/c 0" "chmod /pp r0" "chmod /pp/c n0" "write /public/x 0" "write /secret/x 0" \
    >/dev/null

out=$TEST_TMP/events
bg_xc "$out" $g "watch / t" "event" "event 5000" "event 5000" "event 5000" "event 5000" \
    "event 5000" "noevent 500"
wait_lines "$out" 2
n=2
# step CMD [EVENTS]: a dom0 change, then wait for the guest to see EVENTS more events.
step() {
    xc "$1" >/dev/null
    n=$((n + ${2:-0}))
    [ "${2:-0}" = 0 ] || wait_lines "$out" $n
}
step "write /secret/x 1"      # unreadable node, unreadable parent: nothing
step "write /pp/c 1" 1        # unreadable node, readable parent
step "chmod /public/x r0" 1   # readable under the new perms
step "write /public/x 2" 1
step "chmod /public/x n0" 1   # readable under the old perms
step "write /public/x 3"      # not readable any more
step "rm /secret"             # nothing
step "write /pp/done 1" 1
wait "$BG_PID"
expect_eq "guest's events" "$(cat "$out")" "$(lines OK '/ t' '/pp/c t' '/public/x t' \
    '/public/x t' '/public/x t' '/pp/done t' NONE)"

# dom0 sees everything.
expect_out "dom0" "$(lines OK '/secret t' OK '/secret/y t' NONE)" -- \
    xc "watch /secret t" "event" "write /secret/y 1" "event" "noevent 300"
exit 0
