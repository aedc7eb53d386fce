#!/usr/bin/env bash
# understudy-agent with its default handlers starts sndback for a vsnd
# backend dir; killed with SIGKILL, sndback is restarted by the agent, goes
# back to InitWait and serves the frontend's new connection.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
snd_setup
[ -x "$SNDBACK" ] || skip "sndback not built (libasound2-dev missing?)"
start_sim
AGENT=$BUILD/bin/understudy-agent
drv=$(new_dom drv)
guest=$(new_dom guest)
# The card first, then the agent (libxl writes a device in one transaction).
vsnd_add "$guest" "$drv" "$DEV"
"$XENSIM" exec "$drv" -- "$AGENT" --heartbeat-ms 200 >"$TEST_TMP/agent.log" 2>&1 &
apid=$!
on_exit "kill -TERM $apid 2>/dev/null; _sndback_log_check $TEST_TMP/agent.log"
wait_for 10 sb_state_is "$drv" "$guest" "$DEV" 2
sbpid() { pgrep -P "$apid" -x sndback; }
old=$(sbpid) || fail "no sndback under the agent"
sfront "$guest" "$DEV" connect open 0 48000 s16_le 2 8192 1024 write 0 0 4096 ||
    fail "first connection failed"
kill -KILL "$old"
log "killed sndback $old"
wait_for 10 bash -c "p=\$(pgrep -P $apid -x sndback) && [ \"\$p\" != $old ]"
wait_for 10 sb_state_is "$drv" "$guest" "$DEV" 2
sfront "$guest" "$DEV" connect open 0 48000 s16_le 2 8192 1024 write 0 0 4096 close 0 disconnect ||
    fail "the restarted sndback does not serve"
grep -q 'started .*/sndback for /local/domain/[0-9]*/backend/vsnd/' "$TEST_TMP/agent.log" ||
    fail "the agent did not say it started sndback: $(cat "$TEST_TMP/agent.log")"
exit 0
