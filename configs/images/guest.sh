#!/usr/bin/env bash
# guest.sh - a small PV guest image whose disks, NICs and sound cards are
# shadowed: the Debian kernel and an initramfs with busybox, the xenstore
# tools, nbdkit with Understudy's shadow blkfront plugin, nbd-client and the
# nbd module, the shadow netfront (understudy-netfront) and the tun module,
# the shadow sound card (understudy-sndfront and its ALSA plugins, installed
# where alsa-lib looks, with shadow-frontends/snd/asound-understudy.conf) with
# aplay and ALSA's configuration. The guest kernel's own xen-blkfront,
# xen-netfront and snd_xen_front are in the image but not loaded unless the
# kernel command line says understudy.frontends=stock (the system tier's
# interoperability runs), so no kernel driver binds the guest's device/vbd/*,
# device/vif/* and device/vsnd/* dirs: the shadow frontends take them
# (guest-init).
#
#   CACHE=DIR configs/images/guest.sh BUILDDIR KERNELSTAGE [FILE=DEST]...
#
# BUILDDIR is the build tree (lib/nbdkit-understudy-blk-plugin.so,
# bin/understudy-netfront, bin/understudy-sndfront,
# lib/libasound_module_{pcm,ctl}_understudy.so); KERNELSTAGE is dom0-base.sh's
# stage dir; FILE=DEST adds a program (with its libraries), e.g. the system
# tier's workloads. Output: vmlinuz, initrd.img. No root needed.
source "$(dirname "$0")/lib.sh"
BUILDDIR=${1:?usage: guest.sh BUILDDIR KERNELSTAGE [FILE=DEST]...}
KS=${2:?usage: guest.sh BUILDDIR KERNELSTAGE [FILE=DEST]...}
shift 2
KVER=$(cat "$KS/kver")
PLUGIN=$BUILDDIR/lib/nbdkit-understudy-blk-plugin.so
NETFRONT=$BUILDDIR/bin/understudy-netfront
SNDFRONT=$BUILDDIR/bin/understudy-sndfront
SNDPLUG=("$BUILDDIR/lib/libasound_module_pcm_understudy.so" "$BUILDDIR/lib/libasound_module_ctl_understudy.so")
SNDCONF=$IMG_SRC/../../shadow-frontends/snd/asound-understudy.conf
# alsa-lib's plugin directory (Debian's multiarch path, compiled into it).
ALSA_PLUGDIR=/usr/lib/x86_64-linux-gnu/alsa-lib
# alsa-lib's configuration: alsa.conf and what it includes.
ALSA_CONF=(/usr/share/alsa/alsa.conf /usr/share/alsa/cards /usr/share/alsa/pcm /usr/share/alsa/ctl)
# evtchn/gntalloc/gntdev: the frontends bind ports and grant pages from
# userspace; nbd: the disk export becomes /dev/nbdN; tun: the shadow
# netfront's interface.
MODS=(xen-evtchn xen-gntalloc xen-gntdev nbd tun)
# snd_xen_front: Linux's sndif frontend (and its sound core), for the stock row.
STOCK=(xen-blkfront xen-netfront snd_xen_front)
PROGS=(/usr/bin/nbdkit /usr/sbin/nbd-client /usr/bin/xenstore-read /usr/bin/xenstore-write
       /usr/bin/xenstore-list /usr/bin/xenstore-exists /usr/bin/aplay)
for p in "${PROGS[@]}" "$PLUGIN" "$NETFRONT" "$SNDFRONT" "${SNDPLUG[@]}" "$SNDCONF" "${ALSA_CONF[@]}"; do
    [ -e "$p" ] || die "$p missing (nbdkit, nbd-client, xenstore-utils, alsa-utils installed? make all?)"
done
extra=()
for fd in "$@"; do extra+=("${fd%%=*}"); done
H=$(hash_of "$0" "$IMG_SRC/lib.sh" "$IMG_SRC/guest-init" "$KS/kver" "$KS/vmlinuz" "${MODS[*]}" \
    "${STOCK[*]}" "${PROGS[@]}" "$PLUGIN" "$NETFRONT" "$SNDFRONT" "${SNDPLUG[@]}" "$SNDCONF" \
    $(find "${ALSA_CONF[@]}" -type f | sort) "$*" "${extra[@]}")
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
copy_libgcc "$R"
copy_with_libs "$R" "$PLUGIN" /usr/lib/understudy/nbdkit-understudy-blk-plugin.so
copy_with_libs "$R" "$NETFRONT" /usr/lib/understudy/understudy-netfront
copy_with_libs "$R" "$SNDFRONT" /usr/lib/understudy/understudy-sndfront
for p in "${SNDPLUG[@]}"; do copy_with_libs "$R" "$p" "$ALSA_PLUGDIR/$(basename "$p")"; done
install -D -m 644 "$SNDCONF" "$R/etc/alsa/conf.d/50-understudy.conf"
for c in "${ALSA_CONF[@]}"; do
    mkdir -p "$R$(dirname "$c")"
    cp -r "$c" "$R$c"
done
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
