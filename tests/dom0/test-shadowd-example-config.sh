#!/usr/bin/env bash
# The shipped examples are valid: configs/shadowd/shadowd.conf passes
# shadowd -n with its xl config (configs/shadowd/drv-blk.cfg) in place, its
# libvirt variant with configs/shadowd/drv-blk.xml, and
# the systemd unit restarts shadowd always and checks the config first.
source "$(dirname "$0")/../functions.sh"
SHADOWD=$BUILD/bin/shadowd
cp "$TOP/configs/shadowd/drv-blk.cfg" "$TEST_TMP/"
sed "s|/etc/xen/drv-blk.cfg|$TEST_TMP/drv-blk.cfg|" "$TOP/configs/shadowd/shadowd.conf" \
    >"$TEST_TMP/shadowd.conf"
out=$("$SHADOWD" -n -v -c "$TEST_TMP/shadowd.conf" 2>&1) || fail "example refused: $out"
echo "$out" | grep -q "configuration OK (1 driver domains)" || fail "$out"
echo "$out" | grep -q "boot-timeout 1m" || fail "domain option lost: $out"
echo "$out" | grep -q "standby on" || fail "example: standby not on: $out"
# Its libvirt variant (commented out in the example) with drv-blk.xml.
cp "$TOP/configs/shadowd/drv-blk.xml" "$TEST_TMP/"
sed -n '/^# libvirt-uri/,/^# }/p' "$TOP/configs/shadowd/shadowd.conf" | sed 's/^# \{0,1\}//' |
    sed "s|/etc/understudy/drv-blk.xml|$TEST_TMP/drv-blk.xml|" >"$TEST_TMP/libvirt.conf"
grep -q "driver libvirt" "$TEST_TMP/libvirt.conf" || fail "no libvirt example: $(cat "$TEST_TMP/libvirt.conf")"
out=$("$SHADOWD" -n -c "$TEST_TMP/libvirt.conf" 2>&1) || fail "libvirt example refused: $out"
u=$TOP/configs/systemd/shadowd.service
grep -qx "Restart=always" "$u" || fail "unit: not Restart=always"
grep -qE "^RestartSec=[0-9]+(ms|s)?$" "$u" || fail "unit: no RestartSec"
grep -qx "ExecStartPre=/usr/sbin/shadowd -n -c /etc/understudy/shadowd.conf" "$u" || fail "unit: no -n"
exit 0
