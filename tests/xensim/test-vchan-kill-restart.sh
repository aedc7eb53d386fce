#!/usr/bin/env bash
# Debian's own libxenvchan carries verified data both ways between two sim
# domains, and when either end's process is killed (SIGKILL) the survivor sees
# the peer close (unmap-notify) and a restarted end connects again.
source "$(dirname "$0")/../functions.sh"
start_sim
P=$TPROG/xensim/vchan_peer
# Each domain runs its end in a loop, so a killed end is restarted inside the
# still-running domain; the loops are bounded.
srv=$(new_dom srv sh -c "for i in 1 2 3 4 5; do '$P' server; sleep 0.1; done; sleep 1000")
cli=$(new_dom cli sh -c "for i in 1 2 3 4 5; do '$P' client 4194304; sleep 0.1; done; sleep 1000")
xenstore-write /local/domain/$srv/data/peer $cli /local/domain/$cli/data/peer $srv

count() { grep -c "$1" "$TEST_TMP/$2.log" 2>/dev/null || true; }
at_least() { [ "$(count "$1" "$2")" -ge "$3" ]; }

wait_for 60 at_least EXCHANGE-OK cli 1
log "first exchange: $(grep -m1 EXCHANGE-OK "$TEST_TMP/cli.log")"

# Kill the server's process: the client must see the close, then reconnect.
spid=$(grep SERVER-READY "$TEST_TMP/srv.log" | tail -1 | sed 's/.*pid=//')
kill -KILL "$spid"
wait_for 30 at_least PEER-CLOSED cli 1
wait_for 60 at_least EXCHANGE-OK cli 2
log "client saw the server die and exchanged again"

# Kill the client's process: the server must see the close, then serve again.
cpid=$(grep CLIENT-CONNECTED "$TEST_TMP/cli.log" | tail -1 | sed 's/.*pid=//')
kill -KILL "$cpid"
wait_for 30 at_least PEER-CLOSED srv 1
wait_for 60 at_least EXCHANGE-OK cli 3
log "server saw the client die and served a new client"

! grep -qiE 'corrupt|wrong|error while' "$TEST_TMP/cli.log" "$TEST_TMP/srv.log" ||
    fail "data errors: $(grep -iE 'corrupt|wrong|error while' "$TEST_TMP"/{cli,srv}.log)"
grep -qE 'Sanitizer|runtime error' "$TEST_TMP/cli.log" "$TEST_TMP/srv.log" &&
    fail "sanitizer report in a domain"
xensim_state=$("$XENSIM" info srv | grep ^state=)
expect_eq "server domain state" "$xensim_state" "state=running"
exit 0
