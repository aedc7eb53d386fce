#!/usr/bin/env bash
# Transactions: a transaction sees its own writes, nobody else does until it
# commits; its watch events fire at commit, not before; a commit after any
# node it touched changed (including a node it found missing and that now
# exists) fails with EAGAIN and changes nothing; abort discards; RM and
# DIRECTORY work inside one.
source "$(dirname "$0")/xs-functions.sh"
start_sim

expect_out "own writes, commit, events" "$(lines OK OK '/t w' OK OK 1 0 OK NONE OK \
    '/t/a w' '/t/b w' 1 2)" -- \
    xc "write /t/a 0" "watch /t w" "event" "start t1" "write@t1 /t/a 1" "read@t1 /t/a" \
    "read /t/a" "write@t1 /t/b 2" "noevent 300" "end t1 T" "event" "event" \
    "read /t/a" "read /t/b"

expect_out "conflict" "$(lines OK 1 OK OK '!EAGAIN' '!ENOENT' 5)" -- \
    xc "start t2" "read@t2 /t/a" "write /t/a 5" "write@t2 /t/c 1" "end t2 T" "read /t/c" \
    "read /t/a"

expect_out "missing node created meanwhile" "$(lines OK '!ENOENT' OK OK '!EAGAIN')" -- \
    xc "start t" "read@t /t/new" "write /t/new 1" "write@t /t/other 1" "end t T"

expect_out "two transactions" "$(lines OK OK 5 5 OK OK OK '!EAGAIN' 6 '!ENOENT')" -- \
    xc "start t3" "start t4" "read@t3 /t/a" "read@t4 /t/a" "write@t3 /t/a 6" "end t3 T" \
    "write@t4 /t/y 1" "end t4 T" "read /t/a" "read /t/y"

expect_out "abort" "$(lines OK OK 1 OK '!ENOENT')" -- \
    xc "start t5" "write@t5 /t/d 1" "read@t5 /t/d" "end t5 F" "read /t/d"

expect_out "rm and ls inside" "$(lines OK OK OK '!ENOENT' 6 'b new z' 'a b new' OK \
    '!ENOENT' 'b new z')" -- \
    xc "start t6" "rm@t6 /t/a" "write@t6 /t/z 1" "read@t6 /t/a" "read /t/a" "ls@t6 /t" "ls /t" \
    "end t6 T" "read /t/a" "ls /t"

# Across domains: a guest's transaction fails when dom0 changes what it read.
g=$(new_dom g)
xc "write /local/domain/$g/data/x 0" >/dev/null
out=$TEST_TMP/guest
bg_xc "$out" $g "start t" "read@t data/x" "waitfile $TEST_TMP/go" "write@t data/y 1" \
    "end t T" "read data/y" "start u" "read@u data/x" "write@u data/y 2" "end u T" "read data/y"
wait_lines "$out" 2
xc "write /local/domain/$g/data/x 1" >/dev/null
touch "$TEST_TMP/go"
wait "$BG_PID"
expect_eq "guest transaction" "$(cat "$out")" "$(lines OK 0 OK '!EAGAIN' '!ENOENT' OK 1 OK OK 2)"

# The xenstore-* tools run their work in transactions too.
xenstore-write /t/tool 1 && expect_eq "tool in transaction" "$(xenstore-read /t/tool)" 1
exit 0
