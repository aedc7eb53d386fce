#!/usr/bin/env bash
# understudy-agent starts one backend per backend dir and follows the dirs
# by the watch event's path: writes inside a served dir start nothing and
# read no other dir; a dir removed is forgotten (its backend told to stop), a
# dir created again served again; a frontend's whole dir removed forgets its
# devices; a backend that dies abnormally is restarted. The handler is a
# stand-in that logs its dir and sleeps.
source "$(dirname "$0")/../functions.sh"
requires xenstore-write xenstore-rm
start_sim
AGENT=$BUILD/bin/understudy-agent
H=$TEST_TMP/handler
cat >"$H" <<EOF
#!/bin/bash
echo "start \$\$ \$2" >>"$TEST_TMP/handler.log"
trap 'echo "term \$\$ \$2" >>"$TEST_TMP/handler.log"; exit 0' TERM
while :; do sleep 0.2; done
EOF
chmod +x "$H"
: >"$TEST_TMP/handler.log"
drv=$(new_dom drv)
base=/local/domain/$drv/backend/vbd
mkdev() { xenstore-write "$base/$1/$2/state" 2 "$base/$1/$2/frontend-id" "$1"; }
starts() { grep -c "^start [0-9]* $base/$1/$2\$" "$TEST_TMP/handler.log"; }
terms() { grep -c "^term [0-9]* $base/$1/$2\$" "$TEST_TMP/handler.log"; }
_is() { [ "$("$1" "$2" "$3")" = "$4" ]; }
mkdev 1 51712
mkdev 2 51712
"$XENSIM" exec "$drv" -- "$AGENT" --handler vbd="$H" --heartbeat-ms 200 >"$TEST_TMP/agent.log" 2>&1 &
apid=$!
on_exit "kill -TERM $apid 2>/dev/null"
wait_for 10 _is starts 1 51712 1
wait_for 10 _is starts 2 51712 1

# Writes inside served dirs (a backend's own keys, the toolstack's): nothing new.
for i in $(seq 1 40); do xenstore-write "$base/1/51712/k$i" "$i" "$base/2/51712/k$i" "$i"; done
mkdev 3 51712 # a marker: once it is served, the writes above were all seen
wait_for 10 _is starts 3 51712 1
expect_eq "starts for 1 after 80 writes" "$(starts 1 51712)" 1
expect_eq "starts for 2 after 80 writes" "$(starts 2 51712)" 1

# A dir removed: its backend is told to stop; created again: served again.
xenstore-rm "$base/2/51712"
wait_for 10 _is terms 2 51712 1
mkdev 2 51712
wait_for 10 _is starts 2 51712 2

# A second device of guest 1, then guest 1's whole dir removed.
mkdev 1 51728
wait_for 10 _is starts 1 51728 1
xenstore-rm "$base/1"
wait_for 10 _is terms 1 51712 1
wait_for 10 _is terms 1 51728 1

# A backend killed: restarted (an abnormal death, within the budget).
p=$(grep "^start [0-9]* $base/3/51712\$" "$TEST_TMP/handler.log" | tail -n 1 | cut -d' ' -f2)
kill -KILL "$p"
wait_for 10 _is starts 3 51712 2
expect_eq "guest 2's device untouched" "$(starts 2 51712) $(terms 2 51712)" "2 1"
kill -0 "$apid" || fail "the agent died: $(tail -n 5 "$TEST_TMP/agent.log")"
exit 0
