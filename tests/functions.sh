# tests/functions.sh - sourced by every test script.
#
# run-tests exports BUILD (the build tree under test, e.g. build/test) and
# TEST_TMP (a scratch directory removed after the test). A test exits 0 to
# pass, 1 to fail, 77 to skip (after printing "SKIP: reason").

set -u
: "${BUILD:?run tests through tests/run-tests, or export BUILD=build/test}"
BUILD=$(cd "$BUILD" && pwd)
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${TEST_TMP:=$(mktemp -d /tmp/understudy-test.XXXXXX)}"
XENSIM=$BUILD/bin/xensim
TPROG=$BUILD/tests
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

_cleanups=()
# on_exit CMD...: run CMD when the test exits, last registered first.
on_exit() { _cleanups+=("$*"); }
_run_cleanups() {
    local rc=$? i
    for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[$i]}" || true; done
    exit $rc
}
trap _run_cleanups EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
log() { echo "# $*"; }

# requires CMD...: skip unless each command exists.
requires() { local c; for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip "$c not installed"; done; }

# expect_eq WHAT GOT WANT
expect_eq() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }

# wait_for SECONDS CMD...: poll CMD every 50 ms until it succeeds; fail on timeout.
wait_for() {
    local to=$1 i; shift
    for ((i = 0; i < to * 20; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.05; done
    fail "timed out after ${to}s waiting for: $*"
}

# start_sim: start a fresh xensim daemon for this test and act as dom0.
# Sets XENSIM_DIR; stops the sim (and every domain) on exit.
start_sim() {
    XENSIM_DIR=$TEST_TMP/sim
    export XENSIM_DIR
    "$XENSIM" start || fail "xensim start failed: $(cat "$XENSIM_DIR/xensimd.log" 2>/dev/null)"
    on_exit "_stop_sim"
    eval "$("$XENSIM" env 0)"
}
_stop_sim() {
    "$XENSIM" stop >/dev/null 2>&1 || pkill -KILL -F "$XENSIM_DIR/xensimd.pid" 2>/dev/null
    # A sanitizer report from the daemon fails the test.
    if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$XENSIM_DIR/xensimd.log" 2>/dev/null; then
        echo "FAIL: sanitizer report in xensimd.log:" >&2
        grep -A30 -E 'Sanitizer|runtime error' "$XENSIM_DIR/xensimd.log" | head -60 >&2
        exit 1
    fi
}

# as_dom DOM CMD...: run CMD as a process of domain DOM (not in its process group).
# Backgrounded as `as_dom ... &`, $! is a subshell's pid, not CMD's: to kill CMD
# later, background `"$XENSIM" exec DOM -- CMD &` instead.
as_dom() { local d=$1; shift; "$XENSIM" exec "$d" -- "$@"; }

# new_dom NAME [CMD...]: create a domain (default command: sleep forever); prints its domid.
new_dom() {
    local name=$1; shift
    [ $# -gt 0 ] || set -- sleep 100000
    "$XENSIM" create --name "$name" --log "$TEST_TMP/$name.log" -- "$@"
}
