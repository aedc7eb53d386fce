#!/usr/bin/env bash
# If the new backend serves a disk of another size, the frontend must not
# write to it: shadow/state goes failed, the error is logged, and every
# request fails with EIO from then on.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
driver_setup 64 --seconds 20 --expect-fail
other=$TEST_TMP/other.img
truncate -s 32M "$other"
sleep 1
drv=$(replace_backend "$cur" drv1 "$guest" "$DEV" "$other")
wait_for 20 fe_is shadow/state failed
"$XENSIM" wait guest --until shutdown --timeout 60 >/dev/null || fail "the driver did not finish"
sanitizer_check "$TEST_TMP"/*.log
grep -q '^DRIVER-OK state=failed read=Input/output error' "$TEST_TMP/guest.log" ||
    fail "driver: $(grep DRIVER- "$TEST_TMP/guest.log" | tail -1)"
grep -q 'serves 65536 sectors with sector-size 512; the disk had 131072' "$TEST_TMP/guest.log" ||
    fail "the mismatch was not logged"
grep -q 'FAILED: the new backend serves a different disk' "$TEST_TMP/guest.log" || fail "no FAILED line"
[ "$(stat -c %b "$other")" -eq 0 ] || fail "something was written to the other disk"
exit 0
