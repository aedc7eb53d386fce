#!/usr/bin/env bash
# Watches: an initial event right after the OK reply; events for the changed
# path on watches at or above it (only the written leaf, not the parents a
# write creates); RM fires the removed node for watches above and each removed
# child for watches exactly on it; duplicate watch EEXIST; unwatch; relative
# watches get relative event paths; MKDIR of an existing node fires nothing.
source "$(dirname "$0")/xs-functions.sh"
start_sim

expect_out "dom0 watches" "$(lines OK '/w tok' OK '/w/a/b tok' OK '/w/a/b leaf' \
    OK '/w/a/b leaf' '/w/a tok' '!EEXIST' OK '/w tok2' OK '/w tok' '/w tok2' \
    OK '!ENOENT' '!EINVAL' OK '/w/m tok' OK OK '/w/m tok' OK NONE)" -- \
    xc "watch /w tok" "event" \
    "write /w/a/b 1" "event" \
    "watch /w/a/b leaf" "event" \
    "rm /w/a" "event" "event" \
    "watch /w tok" "watch /w tok2" "event" \
    "write /w 1" "event" "event" \
    "unwatch /w tok2" "unwatch /w tok2" "watch /a//b t" \
    "mkdir /w/m" "event" "mkdir /w/m" \
    "chmod /w/m n0,r1" "event" "rm /w/none" "noevent 300"

g=$(new_dom g)
expect_out "guest relative watches" "$(lines OK 'data r' OK 'data/x r' OK \
    "/local/domain/$g/data a" OK 'data/y r' "/local/domain/$g/data/y a" \
    OK '@anything s' NONE)" -- \
    gxc $g "watch data r" "event" "write data/x 1" "event" \
    "watch /local/domain/$g/data a" "event" "write data/y 1" "event" "event" \
    "watch @anything s" "event" "noevent 300"

# Events from another connection, and xenstore-watch itself.
out=$TEST_TMP/watch.out
bg_xc "$out" $g "watch data/q r" "event" "event 5000" "event 5000"
wait_lines "$out" 2
xc "write /local/domain/$g/data/q/deep 1" "rm /local/domain/$g/data/q" >/dev/null
wait "$BG_PID"
expect_eq "events from dom0's writes" "$(cat "$out")" "$(lines OK 'data/q r' 'data/q/deep r' 'data/q r')"

timeout 10 xenstore-watch -n 2 /tw >"$TEST_TMP/xw.out" &
xw=$!
wait_lines "$TEST_TMP/xw.out" 1
xenstore-write /tw/k v
wait $xw || fail "xenstore-watch did not see 2 events: $(cat "$TEST_TMP/xw.out")"
expect_eq "xenstore-watch" "$(cat "$TEST_TMP/xw.out")" "$(lines /tw /tw/k)"
exit 0
