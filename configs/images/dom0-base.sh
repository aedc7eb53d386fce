#!/usr/bin/env bash
# dom0-base.sh - the Debian 12 (bookworm) root of a Xen host, without
# Understudy: Xen 4.17 (hypervisor and tools), the Debian 6.1 kernel (the same
# kernel serves dom0, the driver domains and the guests), systemd, and the
# Xen-enabled QEMU (qemu-system-xen) for qdisk backends in dom0.
#
#   CACHE=DIR configs/images/dom0-base.sh      prints the stage dir
#
# The stage dir holds rootfs/ (the root tree), xen (the uncompressed
# hypervisor, as QEMU's multiboot loader wants it), vmlinuz, initrd.img and
# kver. Root needed: debootstrap and chroot (device nodes, file ownership).
# Network: the Debian mirror this host's apt uses.
source "$(dirname "$0")/lib.sh"

PKGS=(xen-utils-4.17 xen-utils-common xen-hypervisor-4.17-amd64 xenstore-utils
      linux-image-amd64 initramfs-tools kmod systemd-sysv udev iproute2 procps e2fsprogs
      util-linux busybox zstd qemu-system-xen)
# The host's own apt sources (bookworm and bookworm-security): dom0 gets the
# same Xen libraries our binaries are built against.
SOURCES=/etc/apt/sources.list.d/debian.sources
[ -f "$SOURCES" ] || die "no $SOURCES (this recipe expects a Debian 12 build host)"
MIRROR=$(awk '/^URIs:/{print $2; exit}' "$SOURCES")

H=$(hash_of "$0" "$SOURCES" "${PKGS[*]}")
D=$(stage_dir dom0-base "$H")
if stage_done dom0-base "$H"; then echo "$D"; exit 0; fi
need_root "dom0-base.sh" "debootstrap and chroot"
command -v debootstrap >/dev/null || die "debootstrap not installed (make systest-deps)"
stage_prune dom0-base "$H"
rm -rf --one-file-system "$D"
mkdir -p "$D"
R=$D/rootfs
t0=$(date +%s)
say "dom0-base: debootstrap bookworm from $MIRROR (a few minutes)"
debootstrap --variant=minbase --include=ca-certificates bookworm "$R" "$MIRROR" >"$D/debootstrap.log" 2>&1 ||
    die "debootstrap failed, see $D/debootstrap.log"
cp "$SOURCES" "$R/etc/apt/sources.list.d/debian.sources"
rm -f "$R/etc/apt/sources.list"
umount_all() { umount -l "$R/dev/pts" "$R/dev" "$R/proc" "$R/sys" 2>/dev/null || true; }
trap umount_all EXIT
mount -t proc proc "$R/proc"
mount -t sysfs sys "$R/sys"
mount --bind /dev "$R/dev"
mount -t devpts devpts "$R/dev/pts"
# No daemons start inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"
chmod 755 "$R/usr/sbin/policy-rc.d"
say "dom0-base: apt-get install ${PKGS[*]}"
chroot "$R" sh -c "export DEBIAN_FRONTEND=noninteractive; apt-get update -q &&
    apt-get -y -q upgrade && apt-get install -y -q --no-install-recommends ${PKGS[*]}" \
    >"$D/apt.log" 2>&1 || die "apt-get in the dom0 root failed, see $D/apt.log"
umount_all
trap - EXIT
rm -f "$R/usr/sbin/policy-rc.d" "$R"/var/cache/apt/archives/*.deb
rm -rf "$R"/var/lib/apt/lists/*
echo dom0 >"$R/etc/hostname"
echo '/dev/root / ext4 rw,noatime 0 1' >"$R/etc/fstab"
KVER=$(basename "$(ls -d "$R"/lib/modules/*/ | head -n1)")
[ -n "$KVER" ] && [ -f "$R/boot/vmlinuz-$KVER" ] || die "no kernel in the dom0 root"
echo "$KVER" >"$D/kver"
ln -s "rootfs/boot/vmlinuz-$KVER" "$D/vmlinuz"
ln -s "rootfs/boot/initrd.img-$KVER" "$D/initrd.img"
xen=$(ls "$R"/boot/xen-4.17*-amd64.gz | head -n1)
zcat "$xen" >"$D/xen" # QEMU's multiboot loader takes an uncompressed ELF
dpkg-query --admindir="$R/var/lib/dpkg" -W -f '${Package} ${Version}\n' >"$D/packages.txt"
touch "$D/.done"
say "dom0-base: built in $(($(date +%s) - t0)) s: kernel $KVER, $(wc -l <"$D/packages.txt") packages"
echo "$D"
