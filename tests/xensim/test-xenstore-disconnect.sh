#!/usr/bin/env bash
# A client that goes away mid-transaction or with a half-sent message changes
# nothing: its transaction is dropped uncommitted, a partial request is never
# run, and the daemon keeps serving everyone else. A libxenstore client killed
# inside a transaction (and holding watches) leaves nothing behind either.
source "$(dirname "$0")/xs-functions.sh"
start_sim
timeout 60 "$XRAW" half || fail "half-sent messages"
timeout 60 "$XRAW" disconnect-tx || fail "disconnect in a transaction"

g=$(new_dom g)
out=$TEST_TMP/killed
bg_xc "$out" $g "watch data w" "start t" "write@t data/uncommitted 1" "rm@t name" "sleep 30000"
wait_lines "$out" 3
kill -KILL "$BG_PID"
wait "$BG_PID" 2>/dev/null
expect_out "after the kill" "$(lines '!ENOENT' g OK)" -- \
    xc "read /local/domain/$g/data/uncommitted" "read /local/domain/$g/name" \
    "write /local/domain/$g/data/after 1"
# The guest's next connection works, with its full transaction allowance.
cmds=()
for i in $(seq 1 11); do cmds+=("start t$i"); done
expect_eq "new connection" "$(gxc $g "${cmds[@]}" "read data/after" | tr '\n' ' ')" \
    "OK OK OK OK OK OK OK OK OK OK OK 1 "
exit 0
