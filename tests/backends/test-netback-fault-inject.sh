#!/usr/bin/env bash
# Injected faults (USK_DRV_INJECT, as shadowd writes them): corrupt N - the
# next N answers (tx or rx) carry a wrong id or an impossible status; hang - nothing is
# answered until the next request; slow MS - every answer MS late; crash -
# netback aborts. A value present before netback starts is not acted on.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_net
start_sim
drv=$(new_dom drv)
guest=$(new_dom guest)
inject "$drv" crash # before start: must be ignored
vif_add "$guest" "$drv" $DEV
netback_start "$drv" "$guest" $DEV
wait_for 10 vif_state_is "$drv" "$guest" $DEV 2
out=$TEST_TMP/front.out
g=$TEST_TMP/g
# To a MAC nobody has: no reply comes back, so every corrupted answer is a tx one.
netfront_bg "$out" "$guest" $DEV --timeout 20 --peer-mac 02:00:00:00:00:99 connect wait-file $g.1 corrupt 2 wait-file $g.2 \
    no-answer 700 wait-file $g.3 await-answer 10000 latency-at-least 300 wait-file $g.4 \
    udp 7000 100 5 close
wait_line "$out" '^ok: connected' 20
inject "$drv" corrupt 2
touch $g.1
wait_line "$out" '^ok: corrupt answer 1' 20
inject "$drv" hang
touch $g.2
wait_line "$out" '^ok: no answer' 20
inject "$drv" slow 300
touch $g.3
wait_line "$out" '^ok: answered after' 20
inject "$drv" slow 0
touch $g.4
wait $FRONT_PID || fail "frontend: $(cat "$out")"
cat "$out"
netback_alive || fail "netback died before the crash fault"
inject "$drv" crash
netback_wait_exit 10
[ "$NB_RC" -ne 0 ] || fail "netback exited 0 on crash"
grep -q "injected fault .*: crash" "$NB_LOG" || fail "no log line for the crash"
exit 0
