#!/usr/bin/env bash
# A domain's main process dying is the domain crashing (xensim shuts it down),
# and a crashed domain's kernel performs no unmap-notify: SIGKILL of a mapper
# that is its domain's main process leaves the sharer's view untouched. The
# same process closing its handle while alive does notify.
source "$(dirname "$0")/hyp-functions.sh"
start_sim

# main_mapper NAME: a domain whose main process is the mapper ($b, $MOUT),
# and a sharer domain ($a, $SOUT).
main_mapper() {
    W=$TEST_TMP/$1
    mkdir -p "$W"
    b=$(new_dom "$1-m" "$GNT_NOTIFY" mapper "$W") || fail "create $1-m"
    a=$(in_dom "$1-s" "$GNT_NOTIFY" sharer "$W" "$b") || fail "create $1-s"
    SOUT=$TEST_TMP/$1-s.log
    MOUT=$TEST_TMP/$1-m.log
    wait_for 20 has "$SOUT" '^READY'
    wait_for 20 has "$MOUT" '^READY'
}

main_mapper crash
kill -KILL "$(pid_in "$MOUT")"
wait_for 10 sh -c "'$XENSIM' info $b | grep -qx state=shutdown"
"$XENSIM" info "$b" | grep -x shutdown_reason=crash || fail "not a crash"
sleep 0.5
stop_pair
has "$SOUT" '^SUMMARY events=0 peer_byte=1' || fail "sharer saw a notify from a crashed domain"

main_mapper close
touch "$W/close-mapper"
wait_for 10 has "$MOUT" '^CLOSED'
wait_for 10 has "$SOUT" '^EVENT peer_byte=0'
log "a main process closing its handle notifies"
expect_eq "domain state" "$("$XENSIM" info "$b" | grep ^state=)" "state=running"
stop_pair
no_sanitizer_reports "$TEST_TMP"/crash-*.log "$TEST_TMP"/close-*.log
exit 0
