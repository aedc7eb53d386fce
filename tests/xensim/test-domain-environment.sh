#!/usr/bin/env bash
# A domain's processes get the environment that points Xen's libraries at the
# sim: Debian's xenstore tools in a domain talk to the store as that domain,
# and programs linked against Debian's libxengnttab/libxenevtchn load the
# sim's drop-in builds.
source "$(dirname "$0")/../functions.sh"
requires xenstore-read ldd
start_sim
d=$(new_dom envtest sh -c 'echo "domid=$(xenstore-read domid)"; echo "name=$(xenstore-read name)";
  echo "path=$(xenstore-read /local/domain/$(xenstore-read domid)/domid)";
  ldd '"$TPROG/xensim/vchan_peer"' | grep -E "libxen(gnttab|evtchn)"; echo ldd-done; sleep 100000')
# Wait for the last line: ldd's output comes after the xenstore reads.
wait_for 10 grep -qx 'ldd-done' "$TEST_TMP/envtest.log"
cat "$TEST_TMP/envtest.log"
grep -qx "domid=$d" "$TEST_TMP/envtest.log" || fail "domain $d read a different domid"
grep -qx "name=envtest" "$TEST_TMP/envtest.log" || fail "domain did not read its name"
grep -qx "path=$d" "$TEST_TMP/envtest.log" || fail "absolute path read failed"
for l in libxengnttab libxenevtchn; do
    grep "$l.so.1 => $BUILD/sim/lib/" "$TEST_TMP/envtest.log" >/dev/null ||
        fail "$l does not resolve to the sim's drop-in in a domain"
done
# Outside any domain, dom0's environment comes from `xensim env 0`.
expect_eq "dom0 domid" "$(xenstore-read domid)" 0
exit 0
