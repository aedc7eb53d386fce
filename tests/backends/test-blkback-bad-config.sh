#!/usr/bin/env bash
# Each bad toolstack config gets a clear error: an "error" node naming the
# problem and state Closed, with blkback still running; fixing the config
# key retries, and the device comes up. A missing frontend protocol other
# than the native one is refused at connect. Removing the backend dir
# makes blkback exit 0.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
start_sim
drv=$(new_dom drv)
guest=$(new_dom guest)
img=$TEST_TMP/disk.img
truncate -s 8M "$img"

# expect_config_error DEVID PATTERN KEY=VALUE...: blkback refuses it, saying PATTERN.
expect_config_error() {
    local dev=$1 pat=$2
    shift 2
    vbd_add "$guest" "$drv" "$dev" "$img" "$@"
    blkback_start "$drv" "$guest" "$dev"
    wait_for 10 state_is "$drv" "$guest" "$dev" 6
    local err
    err=$(xenstore-read "$(vbd_be "$drv" "$guest" "$dev")/error")
    grep -qE "$pat" <<<"$err" || fail "device $dev: error node '$err' does not say /$pat/"
    log "device $dev: $err"
    blkback_alive || fail "blkback for $dev exited on a bad config"
}
expect_config_error 1 'params.*No such file' params=$TEST_TMP/missing.img
expect_config_error 2 "mode 'rw'" mode=rw
expect_config_error 3 "cache 'fast'" cache=fast
expect_config_error 4 "format 'qcow2'" params=qcow2:$img
expect_config_error 5 'discard-enable' discard-enable=yes
expect_config_error 6 'neither a regular file' params=$TEST_TMP
be=$(vbd_be "$drv" "$guest" 7)
vbd_add "$guest" "$drv" 7 "$img"
xenstore-rm "$be/params"
blkback_start "$drv" "$guest" 7
wait_for 10 state_is "$drv" "$guest" 7 6
xenstore-read "$be/error" | grep -q 'params' || fail "no error for missing params"
grep -q 'blkback\[2/7\]: error: reading .*params' "$BB_LOG" || fail "no log line for missing params"

# Fixing the key retries: the device comes up and serves I/O.
xenstore-write "$be/params" "$img"
wait_for 10 state_is "$drv" "$guest" 7 2
xenstore-read "$be/error" >/dev/null 2>&1 && fail "error node left after the fix"
blkfront "$guest" 7 connect write 0 8 1 read 0 8 1 close || fail "fixed device does not work"

# A frontend speaking another ABI is refused at connect, clearly.
out=$(blkfront "$guest" 7 --protocol x86_32-abi --timeout 5 connect 2>&1) &&
    fail "x86_32-abi accepted"
xenstore-read "$be/error" | grep -q "protocol 'x86_32-abi' not supported" ||
    fail "no error node for the protocol: $(xenstore-read "$be/error")"
blkfront "$guest" 7 --protocol x86_64-abi connect read 0 8 1 close || fail "native protocol refused"

# The toolstack removes the backend dir: blkback exits 0.
xenstore-rm "$be"
blkback_wait_exit 10
expect_eq "blkback exit status" "$BB_RC" 0
exit 0
