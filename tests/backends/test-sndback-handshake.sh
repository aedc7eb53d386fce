#!/usr/bin/env bash
# sndback completes the xenbus handshake for a card written as libxl writes an
# xl vsnd= line (two streams: playback and capture), offers versions 1,2,
# takes the frontend's version 2, maps each stream's ring and event page, and
# ends in Closed when the frontend closes; OPEN and CLOSE work on both streams.
# A version-1 frontend is served too (no event page), and one that writes no
# version key (as Linux's snd_xen_front) by what its keys say; a version not offered is
# refused with an error node.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
vsnd_setup
be=$(vsnd_be "$drv" "$guest" "$DEV")
expect_eq versions "$(xenstore-read "$be/versions")" 1,2
out=$(sfront "$guest" "$DEV" connect open 0 48000 s16_le 2 65536 4096 close 0 \
    open 1 44100 s32_le 2 65536 8192 close 1 disconnect) || fail "frontend failed: $out"
printf '%s\n' "$out" | sed 's/^/  | /'
grep -q '^connected 2 streams' <<<"$out" || fail "not connected with 2 streams"
expect_eq "backend state" "$(sb_state "$drv" "$guest" "$DEV")" 6
grep -q 'state InitWait -> Connected' "$SB_LOG" || fail "no state change logged: $(cat "$SB_LOG")"
grep -q 'connected: protocol version 2, 2 streams' "$SB_LOG" || fail "version not logged"
grep -q 'stream 0/0 open: clocked, 48000 Hz, s16_le, 2 ch' "$SB_LOG" || fail "open not logged"
# Version 1: no event page (the frontend publishes one, unused).
sfront "$guest" "$DEV" --version 1 connect open 0 48000 s16_le 2 8192 1024 close 0 disconnect ||
    fail "version 1 frontend not served"
grep -q 'connected: protocol version 1' "$SB_LOG" || fail "version 1 not logged"
# No version key, as Linux's snd_xen_front writes none: its event pages say
# version 2 (it failed before: the backend went to Closing and the stock
# frontend timed out in local state 3, remote state 5).
sfront "$guest" "$DEV" --version none connect open 0 48000 s16_le 2 8192 1024 close 0 disconnect ||
    fail "a frontend without a version key not served"
grep -q 'wrote no version: version 2 by its keys (evt-ring-ref present)' "$SB_LOG" ||
    fail "no version inferred: $(tail -n 3 "$SB_LOG")"
grep -q 'connected: protocol version 2' "$SB_LOG" || fail "not connected with version 2"
# Version 3 is not offered.
if out=$(sfront "$guest" "$DEV" --version 3 connect 2>&1); then
    fail "version 3 connected: $out"
fi
err=$(xenstore-read "$be/error")
grep -q "'3': not one of versions 1,2" <<<"$err" || fail "error node '$err'"
sndback_alive || fail "sndback exited"
exit 0
