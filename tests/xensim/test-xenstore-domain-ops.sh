#!/usr/bin/env bash
# Domain requests as xenstored answers them: GET_DOMAIN_PATH for anyone;
# IS_DOMAIN_INTRODUCED, INTRODUCE, RELEASE, RESUME, CONTROL for dom0 only,
# with xenstored's errors (no such domain, domid 0, bad port). INTRODUCE of
# an introduced domain resets its connections' watches and transactions.
source "$(dirname "$0")/xs-functions.sh"
start_sim
g=$(new_dom g)

expect_out "domain paths" "$(lines /local/domain/5 /local/domain/0)" -- \
    xc "domainpath 5" "domainpath abc"
expect_out "guest domain path" "/local/domain/7" -- gxc $g "domainpath 7"
expect_out "introduced" "$(lines T T F T)" -- \
    xc "introduced 0" "introduced $g" "introduced 999" "introduced 32752"
expect_out "errors" "$(lines '!EINVAL' '!EINVAL' '!EINVAL' '!ENOENT' OK '!ENOENT' '!EINVAL')" -- \
    xc "introduce 999 1 1" "introduce $g 1 0" "release 0" "release 999" "resume $g" \
    "resume 999" "resume 0"

# Re-introducing drops the domain's watches and transactions.
out=$TEST_TMP/guest
bg_xc "$out" $g "watch data w" "event" "start t" "waitfile $TEST_TMP/go" "read@t name" \
    "noevent 500"
wait_lines "$out" 3
expect_out "re-introduce" OK -- xc "introduce $g 1 1"
xc "write /local/domain/$g/data/x 1" >/dev/null
touch "$TEST_TMP/go"
wait "$BG_PID"
expect_eq "after re-introduce" "$(cat "$out")" "$(lines OK 'data w' OK '!ENOENT' NONE)"

expect_out "control" "$(lines OK OK '!EINVAL' '!EINVAL')" -- \
    xc "control print hello-from-test" "control check" "control no-such-command" \
    "control print"
xc "control help" | grep -q '^print' || fail "control help: $(xc "control help")"
if command -v xenstore-control >/dev/null; then
    xenstore-control print via-xenstore-control >/dev/null || fail "xenstore-control print"
fi
grep -q 'hello-from-test' "$XENSIM_DIR/xensimd.log" || fail "control print not logged"
exit 0
