#!/usr/bin/env bash
# guest.sh - a small PV guest image whose disks and NICs are shadowed: the
# Debian kernel and an initramfs with busybox, the xenstore tools, nbdkit with
# Understudy's shadow blkfront plugin, nbd-client and the nbd module, the
# shadow netfront (understudy-netfront) and the tun module. The guest
# kernel's own xen-blkfront and xen-netfront are in the image but not loaded
# unless the kernel command line says understudy.frontends=stock (the system
# tier's interoperability runs), so no kernel driver binds the guest's
# device/vbd/* and device/vif/* dirs: the shadow frontends take them
# (guest-init).
#
#   CACHE=DIR configs/images/guest.sh BUILDDIR KERNELSTAGE [FILE=DEST]...
#
# BUILDDIR is the build tree (lib/nbdkit-understudy-blk-plugin.so,
# bin/understudy-netfront); KERNELSTAGE is dom0-base.sh's stage dir;
# FILE=DEST adds a program (with its libraries), e.g. the system tier's
# workloads. Output: vmlinuz, initrd.img. No root needed.
source "$(dirname "$0")/lib.sh"
BUILDDIR=${1:?usage: guest.sh BUILDDIR KERNELSTAGE [FILE=DEST]...}
KS=${2:?usage: guest.sh BUILDDIR KERNELSTAGE [FILE=DEST]...}
shift 2
KVER=$(cat "$KS/kver")
PLUGIN=$BUILDDIR/lib/nbdkit-understudy-blk-plugin.so
NETFRONT=$BUILDDIR/bin/understudy-netfront
# evtchn/gntalloc/gntdev: the frontends bind ports and grant pages from
# userspace; nbd: the disk export becomes /dev/nbdN; tun: the shadow
# netfront's interface.
MODS=(xen-evtchn xen-gntalloc xen-gntdev nbd tun)
STOCK=(xen-blkfront xen-netfront)
PROGS=(/usr/bin/nbdkit /usr/sbin/nbd-client /usr/bin/xenstore-read /usr/bin/xenstore-write
       /usr/bin/xenstore-list /usr/bin/xenstore-exists)
for p in "${PROGS[@]}" "$PLUGIN" "$NETFRONT"; do
    [ -e "$p" ] || die "$p missing (nbdkit, nbd-client, xenstore-utils installed? make all?)"
done
extra=()
for fd in "$@"; do extra+=("${fd%%=*}"); done
H=$(hash_of "$0" "$IMG_SRC/lib.sh" "$IMG_SRC/guest-init" "$KS/kver" "$KS/vmlinuz" "${MODS[*]}" \
    "${STOCK[*]}" "${PROGS[@]}" "$PLUGIN" "$NETFRONT" "$*" "${extra[@]}")
D=$(stage_dir guest "$H")
if stage_done guest "$H"; then echo "$D"; exit 0; fi
stage_prune guest "$H"
rm -rf "$D"
mkdir -p "$D"
R=$D/root
busybox_root "$R"
add_modules "$R" "$KVER" "$KS/rootfs" "${MODS[@]}"
MODLIST=etc/modules.stock add_modules "$R" "$KVER" "$KS/rootfs" "${STOCK[@]}"
for p in "${PROGS[@]}"; do copy_with_libs "$R" "$(readlink -f "$p")" "$p"; done
copy_with_libs "$R" "$PLUGIN" /usr/lib/understudy/nbdkit-understudy-blk-plugin.so
copy_with_libs "$R" "$NETFRONT" /usr/lib/understudy/understudy-netfront
for fd in "$@"; do copy_with_libs "$R" "${fd%%=*}" "${fd#*=}"; done
install -m 755 "$IMG_SRC/guest-init" "$R/init"
echo guest >"$R/etc/hostname"
echo 'root:x:0:0:root:/:/bin/sh' >"$R/etc/passwd"
echo 'root:x:0:' >"$R/etc/group"
cp "$KS/vmlinuz" "$D/vmlinuz"
mk_cpio "$R" "$D/initrd.img"
rm -rf "$R"
touch "$D/.done"
say "guest: initrd $(du -k "$D/initrd.img" | cut -f1) KiB"
echo "$D"
