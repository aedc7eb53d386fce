#!/usr/bin/env bash
# Destroying a domain cleans the store as xenstored and libxl do: the
# domain's connections are closed and its socket removed; every node it owns
# anywhere is deleted (XSA-419); /local/domain/<id>, its /vm/<uuid> and
# /libxl/<id> go; watches fire for all of it, then @releaseDomain. Nodes of
# others that name it in their perms stay (and grant nothing to a later
# domain, see test-xenstore-stale-domid).
source "$(dirname "$0")/xs-functions.sh"
start_sim
g=$(new_dom g)
vm=$(xenstore-read /local/domain/$g/vm)
sock=$(as_dom $g sh -c 'echo $XENSTORED_PATH')
[ -S "$sock" ] || fail "no socket at $sock"

expect_out "setup" "$(lines OK OK OK OK)" -- \
    xc "write /shared/x 1" "chmod /shared n0,b$g" "write /gift/sub/leaf 1" "chmod /gift n$g"
expect_out "guest owns nodes outside its home" "$(lines OK OK "n$g,b$g")" -- \
    gxc $g "write /shared/mine 1" "write data/x 1" "perms /shared/mine"
expect_out "a dom0 node naming the guest" "$(lines OK OK)" -- \
    xc "write /keep 1" "chmod /keep n0,r$g"

conn=$TEST_TMP/conn
# Not through `xensim exec`: that process would die with the domain; this one
# must outlive it to see the store close its connection.
XENSTORED_PATH=$sock timeout 60 "$XRAW" wait-closed >"$conn" 2>&1 &
connpid=$!
on_exit "kill $connpid 2>/dev/null"
wait_lines "$conn" 1
events=$TEST_TMP/events
bg_xc "$events" 0 "watch /marker m" "event" "watch /local/domain/$g d" "watch /shared s" \
    "watch /gift/sub/leaf l" "watch @releaseDomain r" "until /marker"
wait_lines "$events" 10

"$XENSIM" destroy g
wait $connpid || fail "guest connection: $(cat "$conn")"
expect_eq "guest connection closed" "$(cat "$conn")" "$(lines connected closed "ok wait-closed")"
[ -e "$sock" ] && fail "socket $sock left behind"
xenstore-write /marker 1
wait "$BG_PID"
sed -i '$d' "$events" # the marker

expect_out "store after destroy" "$(lines '!ENOENT' '!ENOENT' '!ENOENT' '!ENOENT' '!ENOENT' \
    1 1 "n0,r$g" 'x')" -- \
    xc "read /local/domain/$g" "read $vm" "read /libxl/$g" "read /shared/mine" "read /gift" \
    "read /shared/x" "read /keep" "perms /keep" "ls /shared"
for e in "/local/domain/$g d" "/local/domain/$g/data d" "/shared/mine s" "/gift/sub/leaf l" \
    "@releaseDomain r"; do
    grep -qx "$e" "$events" || fail "no event '$e' in: $(cat "$events")"
done
expect_eq "@releaseDomain comes last" "$(tail -1 "$events")" "@releaseDomain r"
expect_eq "one @releaseDomain (after its initial one)" "$(grep -c '^@releaseDomain' "$events")" 2
exit 0
