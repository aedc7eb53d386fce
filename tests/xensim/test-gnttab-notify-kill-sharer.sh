#!/usr/bin/env bash
# Unmap-notify when the sharing process dies: SIGKILL of the sharer (a process
# of a domain that stays alive) clears its byte in the page the peer still
# maps and sends its event, as Linux's gntalloc does when the file is released.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
notify_pair p
kill -KILL "$(pid_in "$SOUT")"
wait_for 10 has "$MOUT" '^EVENT peer_byte=0'
log "mapper notified of the sharer's death; its mapping stays readable"
expect_eq "sharer domain state" "$("$XENSIM" info "$a" | grep ^state=)" "state=running"
stop_pair
has "$MOUT" '^SUMMARY events=1 peer_byte=0' || fail "mapper summary"
no_sanitizer_reports "$SOUT" "$MOUT"
exit 0
