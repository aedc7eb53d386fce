# configs/images/lib.sh - shared by the image recipes (sourced, bash).
#
# Caching: an image is built into $CACHE/<name>-<hash>/ where <hash> covers
# the recipe files and every input file (our binaries included); a finished
# build leaves a .done stamp. A recipe whose hash has a stamp is not rebuilt.

set -euo pipefail
IMG_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${CACHE:?set CACHE to the image cache dir (make systest uses build/systest/cache)}"
mkdir -p "$CACHE"
say() { echo "images: $*" >&2; }
die() { echo "images: ERROR: $*" >&2; exit 1; }

need_root() {
    [ "$(id -u)" -eq 0 ] || die "$1 needs root ($2)"
}

# hash_of FILE|STRING...: one sha256 over the files' contents (a word that is
# not a file is hashed as text, e.g. a package version).
hash_of() {
    local a
    for a in "$@"; do
        if [ -f "$a" ]; then
            printf '%s\n' "$(basename "$a")"
            cat "$a"
        else printf 'word:%s\n' "$a"; fi
    done | sha256sum | cut -c1-16
}

# cached NAME HASH: prints the stage dir; returns 0 if it is already built.
stage_dir() { echo "$CACHE/$1-$2"; }
stage_done() { [ -e "$(stage_dir "$1" "$2")/.done" ]; }
# Remove older builds of stage NAME (keep the one with HASH).
stage_prune() {
    local d
    for d in "$CACHE/$1"-????????????????; do # NAME-<16 hex>: not NAME-other-<hash>
        [ -d "$d" ] && [ "$d" != "$(stage_dir "$1" "$2")" ] && rm -rf --one-file-system "$d"
    done
    return 0
}

# copy_with_libs ROOT FILE [DEST]: FILE into ROOT/DEST (default: same path),
# and every shared library ldd says it needs, at the same paths, unless the
# ROOT has them already (a Debian root with the same packages).
copy_with_libs() {
    local root=$1 f=$2 dest=${3:-$2} lib
    install -D -m "$(stat -c %a "$f")" "$f" "$root$dest"
    { ldd "$f" 2>/dev/null || true; } | awk '/=> \//{print $3} /^[[:space:]]*\/[^ ]*ld-linux/{print $1}' |
        while read -r lib; do
            [ -e "$root$lib" ] && continue
            local real
            real=$(readlink -f "$lib")
            install -D -m 755 "$real" "$root$lib"
        done
}

# copy_libgcc ROOT: libgcc_s, which glibc loads only when a thread is
# cancelled or exits early, so ldd does not list it: libxenstore cancels its
# watch-reader thread in xs_close (a backend whose frontend went away), and
# nbdkit its connection threads. Without it the program aborts there
# ("libgcc_s.so.1 must be installed for pthread_cancel to work").
copy_libgcc() {
    local lib=/lib/x86_64-linux-gnu/libgcc_s.so.1
    [ -e "$lib" ] || die "$lib missing (libgcc-s1)"
    copy_with_libs "$1" "$(readlink -f "$lib")" "$lib"
}

# add_modules ROOT KVER MODROOT MOD...: the modules and what they depend on
# (from MODROOT/lib/modules/KVER/modules.dep) into ROOT, appended to a load
# order file (dependencies first): ROOT/etc/modules.order, or
# ROOT/$MODLIST where the caller sets MODLIST (a list loaded on demand).
add_modules() {
    local root=$1 kver=$2 modroot=$3
    shift 3
    local dep=$modroot/lib/modules/$kver/modules.dep
    [ -f "$dep" ] || die "no $dep (run depmod on the kernel tree first)"
    local -A seen=()
    local order=()
    _add_mod() {
        local name=$1 line path d
        line=$(grep -E "(^|/)${name//[-_]/[-_]}\.ko(\.[a-z]+)?:" "$dep" | head -n1) ||
            die "module $name not in $dep"
        path=${line%%:*}
        [ -n "${seen[$path]:-}" ] && return 0
        seen[$path]=1
        for d in ${line#*:}; do _add_mod "$(basename "${d%%.ko*}")"; done
        order+=("$path")
        install -D -m 644 "$modroot/lib/modules/$kver/$path" "$root/lib/modules/$kver/$path"
    }
    local m
    for m in "$@"; do _add_mod "$m"; done
    mkdir -p "$root/etc"
    local p
    for p in "${order[@]}"; do echo "/lib/modules/$kver/$p"; done >>"$root/${MODLIST:-etc/modules.order}"
}

# static_busybox: the path of a static busybox: Debian's busybox-static,
# fetched once with `apt-get download` into $CACHE/busybox-static (the host
# may have the dynamic busybox package installed: the two conflict).
static_busybox() {
    local d=$CACHE/busybox-static
    if [ ! -x "$d/bin/busybox" ]; then
        rm -rf "$d"
        mkdir -p "$d/deb"
        (cd "$d/deb" && apt-get download busybox-static >/dev/null 2>&1) ||
            die "apt-get download busybox-static failed"
        dpkg -x "$d"/deb/busybox-static_*.deb "$d/x"
        install -D -m 755 "$d/x/bin/busybox" "$d/bin/busybox"
        rm -rf "$d/x"
    fi
    file -L "$d/bin/busybox" | grep -q 'statically linked' || die "$d/bin/busybox is not static"
    echo "$d/bin/busybox"
}

# busybox_root ROOT: a static busybox with its applets linked in ROOT/bin.
busybox_root() {
    local root=$1 bb
    bb=$(static_busybox)
    mkdir -p "$root"/{bin,sbin,dev,proc,sys,run,tmp,etc,lib,lib64,var/log}
    install -m 755 "$bb" "$root/bin/busybox"
    local a
    for a in $("$bb" --list); do
        [ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
    done
}

# extract_vmlinux VMLINUZ OUT: the ELF kernel inside a bzImage, uncompressed.
# A PV domain's kernel is decompressed by the toolstack (libxenguest) at every
# create; Debian's is xz, which took most of an 18.6 s create of a driver
# domain under the system tier's emulation (bench/README.md, "The timeline").
# The payload is the one xz stream of the image (its magic, FD 37 7A 58 5A 00).
extract_vmlinux() {
    local off
    off=$(LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$1" | head -n 1 | cut -d: -f1)
    [ -n "$off" ] || die "$1: no xz payload (not a Debian bzImage?)"
    # xz stops at the end of its stream and complains of what follows it.
    tail -c +$((off + 1)) "$1" | xz -dcq >"$2.tmp" 2>/dev/null || true
    [ "$(head -c 4 "$2.tmp" | od -An -c | tr -d ' ')" = '177ELF' ] || die "$1: the xz payload is not an ELF kernel"
    mv "$2.tmp" "$2"
}

# mk_cpio ROOT OUT: a gzip'd newc initramfs of ROOT (owned by root).
mk_cpio() {
    (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
        gzip -6 >"$2.tmp"
    mv "$2.tmp" "$2"
}
