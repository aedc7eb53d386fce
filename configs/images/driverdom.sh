#!/usr/bin/env bash
# driverdom.sh - the disk/network driver-domain image: the Debian kernel and
# an initramfs that holds little beyond busybox, understudy-agent, blkback,
# netback, the libraries they link, and the kernel modules a driver domain
# needs. It boots in seconds: its boot time is the cold-restart time guests
# wait through when shadowd restarts it.
#
#   CACHE=DIR configs/images/driverdom.sh BINDIR KERNELSTAGE    prints the stage dir
#
# BINDIR holds understudy-agent, blkback, netback (build/bin); KERNELSTAGE is
# dom0-base.sh's stage dir (its kernel and modules). Output: vmlinuz,
# initrd.img. No root needed (the cpio records every file as root's).
source "$(dirname "$0")/lib.sh"
BINDIR=${1:?usage: driverdom.sh BINDIR KERNELSTAGE}
KS=${2:?usage: driverdom.sh BINDIR KERNELSTAGE}
KVER=$(cat "$KS/kver")
# xen-blkfront: the disks the driver domain serves reach it as its own xvd*
# (a controller passed through would use its own driver instead);
# gntdev/evtchn: the backends map guests' grants and bind their ports;
# tun/bridge: netback's TAP devices and their bridge; xen-netfront: the
# network driver domain's uplink (a NIC passed through would use its own
# driver instead); xen_wdt: the watchdog.
MODS=(xen-evtchn xen-gntdev xen-gntalloc xen-blkfront xen-netfront tun bridge xen_wdt)
BINS=(understudy-agent blkback netback)
H=$(hash_of "$0" "$IMG_SRC/lib.sh" "$IMG_SRC/driverdom-init" "$KS/kver" "$KS/vmlinuz" \
    "${MODS[*]}" "${BINS[@]/#/$BINDIR/}")
D=$(stage_dir driverdom "$H")
if stage_done driverdom "$H"; then echo "$D"; exit 0; fi
stage_prune driverdom "$H"
rm -rf "$D"
mkdir -p "$D"
R=$D/root
busybox_root "$R"
add_modules "$R" "$KVER" "$KS/rootfs" "${MODS[@]}"
for b in "${BINS[@]}"; do
    [ -x "$BINDIR/$b" ] || die "$BINDIR/$b missing (make all first)"
    copy_with_libs "$R" "$BINDIR/$b" "/usr/lib/understudy/$b"
done
install -m 755 "$IMG_SRC/driverdom-init" "$R/init"
echo driverdom >"$R/etc/hostname"
cp "$KS/vmlinuz" "$D/vmlinuz"
mk_cpio "$R" "$D/initrd.img"
rm -rf "$R"
touch "$D/.done"
say "driverdom: initrd $(du -k "$D/initrd.img" | cut -f1) KiB"
echo "$D"
