#!/usr/bin/env bash
# The shadow PCM when its program is stopped (SIGSTOP) for longer than the
# buffer while it waits in poll for room - as a guest's vcpu can go unscheduled
# for seconds on a loaded host: the poller must hear an xrun (-EPIPE: aplay
# prepares again and plays on), not -EIO (aplay: "write error: Input/output
# error", exit 1), which it was while the stream's state still said running
# (seen on real Xen under software emulation, tests/system). Three stops;
# nothing played twice. (What was still on its way to the backend when the
# program's clock ran out may be dropped when the program prepares again - a
# period was, in one run of ten here - so the frames missing are logged, not
# judged.)
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/snd-functions.sh"
snd_fe_setup
aplay_stopped_in_poll understudy
sleep 1
check "$REC"
expect_summary repeats 0 channel_errors 0 corrupt 0 format_errors 0
log "frames missing: $(field "$SUMMARY" missing)"
snd_sanitizer_check
exit 0
