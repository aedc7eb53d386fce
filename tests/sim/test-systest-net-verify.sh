#!/usr/bin/env bash
# The system tier's network workload (tests/system/net-verify) must see what
# it exists to see: over loopback it passes against its own server, and it
# fails, saying why, when the bytes are wrong or the server hangs up early.
source "$(dirname "$0")/../functions.sh"
requires socat
NV=$TPROG/system/net-verify
[ -x "$NV" ] || fail "no $NV"
port() { echo $((20000 + RANDOM % 20000)); }

P=$(port)
"$NV" serve "$P" 2>"$TEST_TMP/serve.log" &
on_exit "kill $! 2>/dev/null"
wait_for 10 grep -q serving "$TEST_TMP/serve.log"
timeout -s TERM 3 "$NV" client 127.0.0.1 "$P" 4 20 >"$TEST_TMP/good.log"
rc=$?
cat "$TEST_TMP/good.log"
expect_eq "exit status against its own server (SIGTERM at 3 s)" "$rc" 124
grep -q '^WL DONE errors=0 transfers=[1-9]' "$TEST_TMP/good.log" || fail "no clean transfers"
grep -q 'echoes=[1-9]' "$TEST_TMP/good.log" || fail "no session echoes"

# bad SYSTEM: a server that answers every request with CMD's output.
bad() {
    local p out=$TEST_TMP/$1.log
    p=$(port)
    socat TCP-LISTEN:"$p",reuseaddr,fork SYSTEM:"$2" 2>/dev/null &
    local s=$!
    sleep 0.3
    timeout -s TERM 3 "$NV" client 127.0.0.1 "$p" 1 20 >"$out"
    local rc=$?
    kill $s 2>/dev/null
    wait $s 2>/dev/null
    cat "$out"
    [ $rc = 1 ] || [ $rc = 124 ] || fail "$1: exit $rc"
    grep -q '^WL DONE errors=[1-9]' "$out" || fail "$1: no error counted"
    grep -q "^WL ERROR $3" "$out" || fail "$1: no '$3' error"
}
bad wrong-bytes 'head -c 65536 /dev/zero; sleep 5' verify
bad early-close 'head -c 1 >/dev/null' transfer
exit 0
