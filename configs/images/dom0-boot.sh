#!/usr/bin/env bash
# dom0-boot.sh - a small initramfs that boots the dom0 image faster than
# Debian's (initramfs-tools with MODULES=most loads hundreds of modules, which
# costs a minute under software emulation): busybox and the modules to reach
# an ext4 root on a virtio disk (virtio_pci, virtio_blk, ext4). It mounts
# root= and switch_roots to init= (default /sbin/init). Debian's own initrd
# (in the image's /boot) still works; this one is for QEMU boots.
#
#   CACHE=DIR configs/images/dom0-boot.sh BASESTAGE     prints the stage dir (initrd.img)
source "$(dirname "$0")/lib.sh"
BS=${1:?usage: dom0-boot.sh BASESTAGE}
KVER=$(cat "$BS/kver")
MODS=(virtio_pci virtio_blk ext4 crc32c_generic)
H=$(hash_of "$0" "$IMG_SRC/lib.sh" "$IMG_SRC/dom0-boot-init" "$BS" "${MODS[*]}")
D=$(stage_dir dom0-boot "$H")
if stage_done dom0-boot "$H"; then echo "$D"; exit 0; fi
stage_prune dom0-boot "$H"
rm -rf "$D"
mkdir -p "$D"
R=$D/root
busybox_root "$R"
mkdir -p "$R/newroot"
add_modules "$R" "$KVER" "$BS/rootfs" "${MODS[@]}"
install -m 755 "$IMG_SRC/dom0-boot-init" "$R/init"
mk_cpio "$R" "$D/initrd.img"
rm -rf "$R"
touch "$D/.done"
say "dom0-boot: initrd $(du -k "$D/initrd.img" | cut -f1) KiB"
echo "$D"
