#!/usr/bin/env bash
# A hung backend (its driver domain paused) is detected by the request
# deadline: the frontend reports "timeout" in shadow/report, goes
# recovering, and holds requests until the harness replaces the domain.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
driver_setup 64 --seconds 20 --threads 4 --region-mib 16 --deadline-ms 800 --seed 13 -- \
    cache=volatile
for i in 1 2 3; do
    progress_after $((i * 2))
    t0=$(date +%s%N)
    "$XENSIM" pause "$cur" || fail "pause $cur"
    wait_for 10 fe_is shadow/state recovering
    detect=$((($(date +%s%N) - t0) / 1000000))
    report=$(fe_key "$guest" "$DEV" shadow/report)
    case $report in *" timeout "*) ;; *) fail "report after a pause: '$report'" ;; esac
    [ "$detect" -ge 700 ] || fail "detected after ${detect} ms: before the 800 ms deadline"
    log "pause $i: detected in ${detect} ms: $report"
    next_backend
    live_again "$i"
    log "recovered: $(fe_key "$guest" "$DEV" shadow/last-recovery)"
done
driver_done
exit 0
