#!/usr/bin/env bash
# driverdom.sh - the driver-domain image (disk, network and sound): the Debian
# kernel and an initramfs that holds little beyond busybox, understudy-agent,
# blkback, netback, sndback, the libraries they link, ALSA's configuration, and
# the kernel modules a driver domain needs. It boots in seconds: its boot time
# is the cold-restart time guests wait through when shadowd restarts it.
#
#   CACHE=DIR configs/images/driverdom.sh BINDIR KERNELSTAGE [FILE=DEST]...
#
# BINDIR holds understudy-agent, blkback, netback, sndback (build/bin);
# KERNELSTAGE is dom0-base.sh's stage dir (its kernel and modules); FILE=DEST
# adds a program (with its libraries), e.g. the system tier's recorder of the
# sound card. Output: vmlinux (the kernel, uncompressed: lib.sh extract_vmlinux),
# initrd.img (prints the stage dir). No root
# needed (the cpio records every file as root's).
source "$(dirname "$0")/lib.sh"
BINDIR=${1:?usage: driverdom.sh BINDIR KERNELSTAGE [FILE=DEST]...}
KS=${2:?usage: driverdom.sh BINDIR KERNELSTAGE [FILE=DEST]...}
shift 2
KVER=$(cat "$KS/kver")
# xen-blkfront: the disks the driver domain serves reach it as its own xvd*
# (a controller passed through would use its own driver instead);
# gntdev/evtchn: the backends map guests' grants and bind their ports;
# tun/bridge: netback's TAP devices and their bridge; xen-netfront: the
# network driver domain's uplink (a NIC passed through would use its own
# driver instead); xen_wdt: the watchdog.
MODS=(xen-evtchn xen-gntdev xen-gntalloc xen-blkfront xen-netfront tun bridge xen_wdt)
# The sound card, loaded only with understudy.snd=loop on the kernel command
# line (etc/modules.snd): snd-aloop, a loopback card whose playback end sndback
# plays to and whose capture end gives back what was played (a real sound
# driver domain would load its card's driver instead).
SNDMODS=(snd-aloop)
BINS=(understudy-agent blkback netback sndback)
# xenstore-utils: the init's rescue of an uplink vif the kernel missed
PROGS=(/usr/bin/xenstore-read /usr/bin/xenstore-write /usr/bin/xenstore-list)
# alsa-lib's configuration (sndback opens its PCMs by ALSA name): alsa.conf and
# what it includes, not the UCM and topology files a card without a codec
# never reads.
ALSA_CONF=(/usr/share/alsa/alsa.conf /usr/share/alsa/cards /usr/share/alsa/pcm /usr/share/alsa/ctl)
extra=()
for fd in "$@"; do extra+=("${fd%%=*}"); done
H=$(hash_of "$0" "$IMG_SRC/lib.sh" "$IMG_SRC/driverdom-init" "$KS/kver" "$KS/vmlinuz" \
    "${MODS[*]}" "${SNDMODS[*]}" "${BINS[@]/#/$BINDIR/}" $(find "${ALSA_CONF[@]}" -type f | sort) \
    "$*" "${extra[@]}")
D=$(stage_dir driverdom "$H")
if stage_done driverdom "$H"; then echo "$D"; exit 0; fi
stage_prune driverdom "$H"
rm -rf "$D"
mkdir -p "$D"
R=$D/root
busybox_root "$R"
add_modules "$R" "$KVER" "$KS/rootfs" "${MODS[@]}"
MODLIST=etc/modules.snd add_modules "$R" "$KVER" "$KS/rootfs" "${SNDMODS[@]}"
for b in "${BINS[@]}"; do
    [ -x "$BINDIR/$b" ] || die "$BINDIR/$b missing (make all first)"
    copy_with_libs "$R" "$BINDIR/$b" "/usr/lib/understudy/$b"
done
for p in "${PROGS[@]}"; do
    [ -x "$p" ] || die "$p missing (xenstore-utils: make deps)"
    copy_with_libs "$R" "$p" "$p"
done
copy_libgcc "$R"
for c in "${ALSA_CONF[@]}"; do
    [ -e "$c" ] || die "$c missing (libasound2-data: make deps)"
    mkdir -p "$R$(dirname "$c")"
    cp -r "$c" "$R$c"
done
for fd in "$@"; do copy_with_libs "$R" "${fd%%=*}" "${fd#*=}"; done
install -m 755 "$IMG_SRC/driverdom-init" "$R/init"
echo driverdom >"$R/etc/hostname"
extract_vmlinux "$KS/vmlinuz" "$D/vmlinux"
mk_cpio "$R" "$D/initrd.img"
rm -rf "$R"
touch "$D/.done"
say "driverdom: initrd $(du -k "$D/initrd.img" | cut -f1) KiB"
echo "$D"
