#!/usr/bin/env bash
# @introduceDomain and @releaseDomain (4.17, XSA-115): every watcher gets the
# initial event, but real ones go only to connections allowed to read the
# special node; by default that is dom0 alone. dom0 may SET_PERMS on them to
# let a guest read; a guest may not. A shutdown fires @releaseDomain once
# (RESUME re-arms it), a destroy fires it again; a new domain fires @introduceDomain.
# Watches on "/" do not see special events.
source "$(dirname "$0")/xs-functions.sh"
start_sim
w=$(new_dom watcher)

d0=$TEST_TMP/dom0.events
gw=$TEST_TMP/guest.events
bg_xc "$d0" 0 "watch @introduceDomain i" "event" "watch @releaseDomain r" "event" \
    "event 5000" "event 5000" "event 5000" "noevent 500"
d0pid=$BG_PID
root=$TEST_TMP/root.events
bg_xc "$root" 0 "watch / root" "event" "until /marker"
rootpid=$BG_PID
bg_xc "$gw" $w "watch @introduceDomain i" "event" "watch @releaseDomain r" "event" \
    "watch data/marker m" "event" "until data/marker"
gpid=$BG_PID
wait_lines "$d0" 4
wait_lines "$gw" 6
wait_lines "$root" 2

x=$(new_dom x)
"$XENSIM" shutdown x
"$XENSIM" destroy x
xenstore-write /marker 1 /local/domain/$w/data/marker 1
wait "$d0pid"
wait "$gpid"
wait "$rootpid"
expect_eq "dom0's special events" "$(cat "$d0")" "$(lines OK '@introduceDomain i' OK \
    '@releaseDomain r' '@introduceDomain i' '@releaseDomain r' '@releaseDomain r' NONE)"
grep -q "^/local/domain/$x root" "$root" || fail "watch on / saw no events: $(cat "$root")"
grep -q '^@' "$root" && fail "watch on / saw special events: $(grep '^@' "$root")"
expect_eq "guest without perms" "$(cat "$gw")" "$(lines OK '@introduceDomain i' OK \
    '@releaseDomain r' OK 'data/marker m' 'data/marker m')"

# A guest cannot open them up; dom0 can.
expect_out "guest chmod" '!EACCES' -- gxc $w "chmod @releaseDomain n$w"
expect_out "dom0 chmod" "$(lines OK OK)" -- \
    xc "chmod @releaseDomain n0,r$w" "chmod @introduceDomain n0,r$w"
bg_xc "$gw" $w "watch @introduceDomain i" "event" "watch @releaseDomain r" "event" \
    "event 5000" "event 5000" "event 5000" "noevent 500"
gpid=$BG_PID
wait_lines "$gw" 4
y=$(new_dom y)
"$XENSIM" shutdown y
"$XENSIM" shutdown y 2>/dev/null # already shut down: no second event
"$XENSIM" destroy y
wait "$gpid"
expect_eq "guest with read perms" "$(cat "$gw")" "$(lines OK '@introduceDomain i' OK \
    '@releaseDomain r' '@introduceDomain i' '@releaseDomain r' '@releaseDomain r' NONE)"

exit 0
