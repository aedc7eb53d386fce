#!/usr/bin/env bash
# A writer stopped (SIGSTOP) for longer than the buffer while it waits in
# poll for room: the clocked PCM runs out while nothing asks for its pointer,
# and the poller must hear it as an xrun (-EPIPE: aplay prepares again and
# plays on), not as -EIO (aplay: "write error: Input/output error", exit 1),
# which it was while the stream's state still said running. Three stops; no
# frame may be lost or repeated, only the xruns' silence between.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
aplay_stopped_in_poll clocked
check "$REC"
expect_summary missing 0 repeats 0 channel_errors 0 corrupt 0
[ "$(field "$SUMMARY" xruns)" -ge 1 ] || fail "the recording has no xrun"
