#!/usr/bin/env bash
# Permissions naming a domain that went away grant nothing to a later domain
# with that domid (xenstored 4.17, XSA-322). Seen through RELEASE and a new
# INTRODUCE of the same domid (xensim does not reuse domids): the released
# domain is forgotten, its nodes are deleted, its clients are refused; once
# introduced again, entries naming it in older nodes are ignored (and still
# listed) until dom0 sets them anew.
source "$(dirname "$0")/xs-functions.sh"
start_sim
g=$(new_dom g)
expect_out "setup" "$(lines OK OK)" -- xc "write /keep 1" "chmod /keep n0,r$g"
expect_out "guest can read" "$(lines 1 g OK)" -- gxc $g "read /keep" "read name" "write data/x 1"

events=$TEST_TMP/events
bg_xc "$events" 0 "watch @releaseDomain r" "event" "watch @introduceDomain i" "event" \
    "event 5000" "event 5000" "noevent 300"
wait_lines "$events" 4
expect_out "release" "$(lines OK F)" -- xc "release $g" "introduced $g"
out=$(as_dom $g timeout 10 "$XC" "read name" 2>&1)
case $out in '!'*|*xs_open*) ;; *) fail "released domain still served: $out" ;; esac
expect_out "its nodes are gone" "$(lines '!ENOENT' '!ENOENT' g)" -- \
    xc "read /local/domain/$g/data/x" "read /local/domain/$g/data" "read /local/domain/$g/name"
expect_out "introduce again" "$(lines OK T)" -- xc "introduce $g 1 1" "introduced $g"
wait "$BG_PID"
expect_eq "events" "$(cat "$events")" "$(lines OK '@releaseDomain r' OK '@introduceDomain i' \
    '@releaseDomain r' '@introduceDomain i' NONE)"

expect_out "stale entries grant nothing" "$(lines '!EACCES' '!EACCES')" -- \
    gxc $g "read /keep" "read name"
expect_out "still listed" "n0,r$g" -- xc "perms /keep"
expect_out "set anew" OK -- xc "chmod /keep n0,r$g"
expect_out "fresh entry grants" 1 -- gxc $g "read /keep"

# Released before it dies, a domain fires no @releaseDomain when destroyed.
expect_out "release again" OK -- xc "release $g"
bg_xc "$events" 0 "watch @releaseDomain r" "event" "noevent 1500"
wait_lines "$events" 2
"$XENSIM" destroy g
wait "$BG_PID"
expect_eq "destroy after release" "$(cat "$events")" "$(lines OK '@releaseDomain r' NONE)"
exit 0
