#!/usr/bin/env bash
# An unmap notification holds its event port open (Linux's evtchn_get): when
# the handle that bound the port closes first, the notification still goes out
# on it at unmap, and only then does the port close.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
a=$(new_dom a) || fail "create a"
b=$(new_dom b) || fail "create b"
"$GNT_CHECK" notify-port "$a" "$b" || fail "notify-port check failed"
exit 0
