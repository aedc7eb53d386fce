#!/usr/bin/env bash
# dom0.sh - the Xen host image: dom0-base.sh's Debian root plus Understudy's
# dom0 side: shadowd, shadowd-priv and shadowctl (with the libraries they need), the
# shadowd systemd unit (enabled) and /etc/understudy/shadowd.conf (libxl
# driver), the xl configs of configs/xl/ in /etc/xen, drv-net's uplink
# hotplug script (configs/xen/) in /etc/xen/scripts, and the driver-domain
# and guest images in /var/lib/understudy/{drv,guest}.
#
#   CACHE=DIR configs/images/dom0.sh BINDIR BASESTAGE DRVSTAGE GUESTSTAGE [FILE=DEST]...
#
# FILE=DEST adds more files (the system tier adds its scripts). Output:
# dom0.img, an ext4 image of the whole root (boot it with BASESTAGE's xen,
# vmlinuz and initrd.img, root=/dev/vda). Root needed: the tree is staged
# with hard links to BASESTAGE's root-owned files (mke2fs -d keeps owners).
source "$(dirname "$0")/lib.sh"
U="usage: dom0.sh BINDIR BASESTAGE DRVSTAGE GUESTSTAGE [FILE=DEST]..."
BINDIR=${1:?$U}
BS=${2:?$U}
DS=${3:?$U}
GS=${4:?$U}
shift 4
TOP=$(cd "$IMG_SRC/../.." && pwd)
UNIT=$TOP/configs/systemd/shadowd.service
CONF=$IMG_SRC/shadowd.conf
XL=("$TOP"/configs/xl/*.cfg)
HOTPLUG=$TOP/configs/xen/vif-understudy-uplink
extra=()
for fd in "$@"; do extra+=("${fd%%=*}"); done
H=$(hash_of "$0" "$IMG_SRC/lib.sh" "$BS" "$DS" "$GS" "$BINDIR/shadowd" "$BINDIR/shadowd-priv" "$BINDIR/shadowctl" \
    "$UNIT" "$CONF" "${XL[@]}" "$HOTPLUG" "$*" "${extra[@]}")
D=$(stage_dir dom0 "$H")
if stage_done dom0 "$H"; then echo "$D"; exit 0; fi
need_root dom0.sh "the staged tree keeps the base root's owners"
stage_prune dom0 "$H"
rm -rf --one-file-system "$D"
mkdir -p "$D"
R=$D/stage
cp -al "$BS/rootfs" "$R" # hard links: every file put below is new (rm first)
put() { # put SRC DEST [MODE]
    rm -f "$R$2"
    install -D -m "${3:-644}" "$1" "$R$2"
}
for b in shadowd shadowd-priv shadowctl; do
    [ -x "$BINDIR/$b" ] || die "$BINDIR/$b missing (make all first)"
    rm -f "$R/usr/sbin/$b"
    copy_with_libs "$R" "$BINDIR/$b" "/usr/sbin/$b"
done
put "$UNIT" /lib/systemd/system/shadowd.service
mkdir -p "$R/etc/systemd/system/multi-user.target.wants"
ln -sf /lib/systemd/system/shadowd.service "$R/etc/systemd/system/multi-user.target.wants/"
put "$CONF" /etc/understudy/shadowd.conf
for x in "${XL[@]}"; do put "$x" "/etc/xen/$(basename "$x")"; done
put "$HOTPLUG" /etc/xen/scripts/vif-understudy-uplink 755
put "$DS/vmlinux" /var/lib/understudy/drv/vmlinux
put "$DS/initrd.img" /var/lib/understudy/drv/initrd.img
put "$GS/vmlinuz" /var/lib/understudy/guest/vmlinuz
put "$GS/initrd.img" /var/lib/understudy/guest/initrd.img
for fd in "$@"; do put "${fd%%=*}" "${fd#*=}" "$(stat -c %a "${fd%%=*}")"; done
# Xen's own modules are loaded at boot (the Debian xen init script expects them).
rm -f "$R/etc/modules-load.d/xen.conf"
printf '%s\n' xen-evtchn xen-gntdev xen-gntalloc xen-privcmd xen-blkback xen-netback >"$R/etc/modules-load.d/xen.conf"
kb=$(du -sk "$R" | cut -f1)
mke2fs -q -t ext4 -L dom0 -d "$R" "$D/dom0.img" "$((kb * 13 / 10 / 1024 + 256))M" >/dev/null ||
    die "mke2fs -d failed"
rm -rf --one-file-system "$R"
touch "$D/.done"
say "dom0: image $(du -k "$D/dom0.img" | cut -f1) KiB used"
echo "$D"
