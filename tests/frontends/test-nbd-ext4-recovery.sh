#!/usr/bin/env bash
# Through the whole guest stack - nbdkit with the (ASan-built) plugin,
# nbdfuse, a loop device, ext4 - a workload of fsynced files runs while its
# driver domain is destroyed, its backend killed, its domain crashed, paused
# past the deadline, and made to answer garbage; each time the harness
# rewires a new driver domain. The backend's write cache is volatile. The
# workload sees no error, fsck is clean through NBD and on the backing file,
# and every file holds its last fsynced contents.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
private_mounts "$@"
nbd_setup 256 deadline-ms=1500 -- cache=volatile
workload_start 40 21
for kind in destroy kill pause corrupt crash destroy pause kill corrupt destroy; do
    sleep 1.5
    workload_running || break
    fault "$kind"
done
[ "$_nfault" -eq 10 ] || fail "only $_nfault faults before the workload ended"
workload_done
nbd_finish
grep -q 'backend-vanished\|backend-restarted' "$TEST_TMP/guest.log" || fail "no rewire was seen"
grep -q 'failed: timeout' "$TEST_TMP/guest.log" || fail "no timeout detection"
grep -q 'failed: bad-response' "$TEST_TMP/guest.log" || fail "no bad-response detection"
exit 0
