#!/usr/bin/env bash
# Invalid responses (unknown id, duplicate, wrong operation, impossible
# status, a response producer index past what was requested) are detected
# before anything acts on them and reported as bad-response; no request
# fails. The misbehaving backend stays alive: the frontend closes, the
# backend closes too, and both go through the handshake again (the
# standard reconnect, no toolstack needed); the last time the harness
# replaces the backend domain instead.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
driver_setup 64 --seconds 25 --threads 4 --region-mib 16 --deadline-ms 2000 --seed 14 -- \
    cache=volatile
kinds=(random-id duplicate wrong-op bad-status garbage-prod)
for ((i = 1; i <= ${#kinds[@]}; i++)); do
    k=${kinds[$((i - 1))]}
    progress_after $((i + 1))
    inject "$drv" corrupt 1
    wait_for 10 grep -q "HOSTILE $k" "$TEST_TMP/$cur.log"
    wait_for 10 recoveries_at_least "$i"
    report=$(fe_key "$guest" "$DEV" shadow/report)
    case $report in "$i bad-response "*) ;; *) fail "report after $k: '$report'" ;; esac
    live_again "$i"
    log "$k: '$report'; reconnected to the same backend: $(fe_key "$guest" "$DEV" shadow/last-recovery)"
done
inject "$drv" corrupt 1
wait_for 10 recoveries_at_least $((${#kinds[@]} + 1))
next_backend
live_again $((${#kinds[@]} + 2))
driver_done
n=$(grep -c 'failed: bad-response' "$TEST_TMP/guest.log")
[ "$n" -ge $((${#kinds[@]} + 1)) ] || fail "$n bad-response detections logged"
exit 0
