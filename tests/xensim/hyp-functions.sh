# tests/xensim/hyp-functions.sh - helpers for the grant-table and event-channel
# tests (sources ../functions.sh). Programs under test are in $TPROG/xensim.
source "$(dirname "${BASH_SOURCE[0]}")/../functions.sh"

GNT_CHECK=$TPROG/xensim/gnt-check
GNT_NOTIFY=$TPROG/xensim/gnt-notify
EVT_CHECK=$TPROG/xensim/evtchn-check

# has FILE PATTERN: FILE has a line matching PATTERN.
has() { grep -q -- "$2" "$1" 2>/dev/null; }
# count FILE PATTERN: lines of FILE matching PATTERN.
count() { grep -c -- "$2" "$1" 2>/dev/null || true; }

# in_dom NAME CMD...: create domain NAME whose main process starts CMD in the
# background and sleeps: CMD is a process of the domain (in its process group,
# so shutdown and destroy kill it) but not its main process. Prints the domid;
# CMD's output goes to $TEST_TMP/NAME.log.
in_dom() {
    local name=$1
    shift
    new_dom "$name" sh -c '"$@" & exec sleep 100000' sh "$@"
}

# pid_in LOG: the pid a gnt-notify end reported in LOG.
pid_in() { sed -n 's/^READY pid=//p' "$1" | head -1; }
# alive PID: the process exists and is not a zombie.
alive() {
    [ -n "$1" ] && [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# notify_pair NAME: a fresh pair of domains, the sharer end of gnt-notify in
# one ($a, output $SOUT) and the mapper end in the other ($b, output $MOUT);
# returns when both are set up. Work directory $W.
notify_pair() {
    W=$TEST_TMP/$1
    mkdir -p "$W"
    b=$(in_dom "$1-m" "$GNT_NOTIFY" mapper "$W") || fail "create $1-m"
    a=$(in_dom "$1-s" "$GNT_NOTIFY" sharer "$W" "$b") || fail "create $1-s"
    SOUT=$TEST_TMP/$1-s.log
    MOUT=$TEST_TMP/$1-m.log
    wait_for 20 has "$SOUT" '^READY'
    wait_for 20 has "$MOUT" '^READY'
}

# stop_pair: tell both ends to finish and wait for their summaries (an end
# that is gone has none).
stop_pair() {
    touch "$W/stop"
    local f
    for f in "$SOUT" "$MOUT"; do
        alive "$(pid_in "$f")" && wait_for 10 has "$f" '^SUMMARY'
    done
    cat "$SOUT" "$MOUT"
}

# no_sanitizer_reports FILE...: fail on a sanitizer report in any FILE.
no_sanitizer_reports() {
    ! grep -lE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$@" 2>/dev/null ||
        fail "sanitizer report: $(grep -hE -A5 'Sanitizer|runtime error' "$@" | head -30)"
}
