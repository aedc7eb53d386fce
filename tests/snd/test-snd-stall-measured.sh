#!/usr/bin/env bash
# A writer that stalls longer than the buffer makes the clocked PCM underrun as
# hardware does: an xrun, aplay prepares a new stream, and sndcheck measures the
# hole in wall-clock time while the frame counter shows nothing was lost.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" --raw -d 2 -o "$TEST_TMP/a.raw" || fail "sndgen failed"
{ head -c 192000 "$TEST_TMP/a.raw"; sleep 0.6; tail -c +192001 "$TEST_TMP/a.raw"; } |
    aplay -q -D clocked -t raw -f S16_LE -c 2 -r 48000 --period-size=1024 --buffer-size=4096 \
        2>"$TEST_TMP/aplay.err" || fail "aplay failed: $(cat "$TEST_TMP/aplay.err")"
check "$REC"
expect_summary streams 2 xruns 1 underruns 1 gaps 0 missing 0 repeats 0 result ok
expect_line '^stream-gap before=1 wall_ms=[0-9]'
expect_line '^resume at=[0-9]+ wall_ms=[0-9]'
expect_line '^run first=0 '
expect_line '^run first=[0-9]+ last=95999 '
hole=$(field "$(grep '^resume' <<<"$CHECK_OUT")" wall_ms)
log "hole: $hole ms"
[ "$(echo "$hole > 1" | bc)" = 1 ] || fail "the hole of the stall was not measured ($hole ms)"
check "$REC" --max-underruns 0
expect_eq "exit status with --max-underruns 0" "$CHECK_RC" 3
