#!/usr/bin/env bash
# Unmap-notify on an orderly release, both ways: when the mapper unmaps
# (xengnttab_map_grant_ref_notify) the sharer sees the mapper's byte cleared
# and an event; when the sharer unshares (xengntshr_share_page_notify) the
# mapper, still mapping the page, sees the sharer's byte cleared and an event.
# Nothing fires before.
source "$(dirname "$0")/hyp-functions.sh"
start_sim

notify_pair p1
sleep 0.3
expect_eq "events before any release" "$(count "$SOUT" '^EVENT')$(count "$MOUT" '^EVENT')" 00
touch "$W/release-mapper"
wait_for 10 has "$MOUT" '^RELEASED'
wait_for 10 has "$SOUT" '^EVENT peer_byte=0'
stop_pair
expect_eq "sharer events after the unmap" "$(count "$SOUT" '^EVENT')" 1
log "mapper unmapped: sharer notified"

notify_pair p2
touch "$W/release-sharer"
wait_for 10 has "$SOUT" '^RELEASED'
wait_for 10 has "$MOUT" '^EVENT peer_byte=0'
stop_pair
expect_eq "mapper events after the unshare" "$(count "$MOUT" '^EVENT')" 1
log "sharer unshared: mapper notified"

no_sanitizer_reports "$TEST_TMP"/p*.log
exit 0
