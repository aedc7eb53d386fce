#!/usr/bin/env bash
# Unmap-notify when the mapping process dies: SIGKILL of the mapper (a process
# of a domain that stays alive) clears its byte in the shared page and sends
# its event, as Linux's gntdev does when the dead process's mappings go.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
notify_pair p
kill -KILL "$(pid_in "$MOUT")"
wait_for 10 has "$SOUT" '^EVENT peer_byte=0'
log "sharer notified of the mapper's death"
expect_eq "mapper domain state" "$("$XENSIM" info "$b" | grep ^state=)" "state=running"
stop_pair
has "$SOUT" '^SUMMARY events=1 peer_byte=0' || fail "sharer summary"
no_sanitizer_reports "$SOUT" "$MOUT"
exit 0
