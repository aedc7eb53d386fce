#!/usr/bin/env bash
# The shipped examples are valid: configs/shadowd/shadowd.conf passes
# shadowd -n with its xl config (configs/shadowd/drv-blk.cfg) in place, and
# the systemd unit restarts shadowd always and checks the config first.
source "$(dirname "$0")/../functions.sh"
SHADOWD=$BUILD/bin/shadowd
cp "$TOP/configs/shadowd/drv-blk.cfg" "$TEST_TMP/"
sed "s|/etc/xen/drv-blk.cfg|$TEST_TMP/drv-blk.cfg|" "$TOP/configs/shadowd/shadowd.conf" \
    >"$TEST_TMP/shadowd.conf"
out=$("$SHADOWD" -n -v -c "$TEST_TMP/shadowd.conf" 2>&1) || fail "example refused: $out"
echo "$out" | grep -q "configuration OK (1 driver domains)" || fail "$out"
echo "$out" | grep -q "boot-timeout 1m" || fail "domain option lost: $out"
u=$TOP/configs/systemd/shadowd.service
grep -qx "Restart=always" "$u" || fail "unit: not Restart=always"
grep -qx "ExecStartPre=/usr/sbin/shadowd -n -c /etc/understudy/shadowd.conf" "$u" || fail "unit: no -n"
exit 0
