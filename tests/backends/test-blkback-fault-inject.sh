#!/usr/bin/env bash
# Fault injection through USK_DRV_INJECT ("<seq> <fault> [<count>]"), once
# per new seq: corrupt N answers N requests with a wrong id or an
# impossible status; hang stops serving until the next seq; slow delays
# every answer; crash aborts the process. A value already present when
# blkback starts is not acted on.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
vbd_setup
out=$TEST_TMP/front.out
g=$TEST_TMP/go
blkfront_bg "$out" "$guest" $DEV --timeout 30 connect flush wait-file "$g.1" corrupt 2 flush \
    wait-file "$g.2" no-answer 1000 wait-file "$g.3" await-answer 10000 wait-file "$g.4" \
    latency-at-least 400 wait-file "$g.5" flush write 0 64 1 read 0 64 1 wait-file "$g.6"
said() { [ "$(grep -c "$1" "$out")" -ge "${2:-1}" ]; }
# inject_and_go N FAULT [COUNT]: inject, wait until blkback took it, let the frontend go on.
inject_and_go() {
    local n=$1
    shift
    inject "$drv" "$@"
    wait_for 10 grep -q "injected fault $_inject_seq: $1" "$BB_LOG"
    touch "$g.$n"
}
trap_out() { echo "--- frontend:"; cat "$out"; echo "--- blkback:"; cat "$BB_LOG"; }
on_exit trap_out

wait_for 10 said 'ok: flush'
inject_and_go 1 corrupt 2
wait_for 10 said 'ok: flush' 2
[ "$(grep -c 'ok: corrupt answer' "$out")" = 2 ] || fail "not two corrupt answers"
grep -q 'id wrong' "$out" && grep -q 'status 32767' "$out" || fail "both kinds of corruption expected"

inject_and_go 2 hang
wait_for 10 said 'ok: no answer for'
inject_and_go 3 slow 0 # any new seq ends the hang
wait_for 15 said 'pending request was answered'

inject_and_go 4 slow 500
wait_for 15 said 'answered after'
inject_and_go 5 slow 0
wait_for 15 said 'ok: read 0+64'
touch "$g.6"
wait "$FRONT_PID" || fail "frontend failed"
grep -q 'fault: corrupted response' "$BB_LOG" || fail "corruption not logged"

# The same seq written again is not a new fault.
k=/local/domain/$drv/data/understudy/inject
n=$(grep -c 'injected fault' "$BB_LOG")
xenstore-write "$k" "$(xenstore-read "$k")"
sleep 0.5
expect_eq "faults acted on after a repeated seq" "$(grep -c 'injected fault' "$BB_LOG")" "$n"

# crash aborts.
inject "$drv" crash
blkback_wait_exit 10
[ "$BB_RC" -ne 0 ] || fail "crashed blkback exited 0"
log "crash: exit status $BB_RC"
# A new blkback ignores the crash request it finds at start, and serves.
blkback_start "$drv" "$guest" $DEV
blkfront "$guest" $DEV connect write 0 8 2 read 0 8 2 close || fail "restarted blkback does not serve"
blkback_alive || fail "restarted blkback acted on an old crash request"
exit 0
