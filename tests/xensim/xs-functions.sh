# tests/xensim/xs-functions.sh - helpers for the xenstore tests, on top of
# ../functions.sh. xs-client (t/xs-client.c) runs operations through Debian's
# libxenstore and prints one line each: the value, OK, or !ENAME.
source "$(dirname "${BASH_SOURCE[0]}")/../functions.sh"
XC=$TPROG/xensim/xs-client
XRAW=$TPROG/xensim/xs-raw
[ -x "$XC" ] && [ -x "$XRAW" ] || skip "xenstore test programs not built"

# xc CMD...: xs-client as dom0; gxc DOM CMD...: as domain DOM.
xc() { timeout 60 "$XC" "$@"; }
gxc() { local d=$1; shift; as_dom "$d" timeout 60 "$XC" "$@"; }

# lines A B C: the expected output of xs-client, one result a line.
lines() { printf '%s\n' "$@"; }

# expect_out WHAT WANT-LINES -- CMD...: run CMD, compare its whole output.
expect_out() {
    local what=$1 want=$2 got
    shift 3
    got=$("$@" 2>&1)
    [ "$got" = "$want" ] || fail "$what:
--- got
$got
--- want
$want"
}

# bg_xc OUT DOM CMD...: xs-client as DOM in the background, output to OUT.
# Sets BG_PID; the client is killed on exit.
bg_xc() {
    local out=$1 d=$2; shift 2
    if [ "$d" = 0 ]; then xc "$@" >"$out" 2>&1 & else gxc "$d" "$@" >"$out" 2>&1 & fi
    BG_PID=$!
    on_exit "kill $BG_PID 2>/dev/null"
}
# wait_lines FILE N: wait until FILE has at least N lines.
wait_lines() { wait_for 10 sh -c "[ \$(wc -l <'$1') -ge $2 ]"; }
