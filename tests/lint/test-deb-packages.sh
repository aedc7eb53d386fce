#!/usr/bin/env bash
# The Debian packages (debian/, make deb): they build into a temp dir, each
# holds its key files where Debian puts them and a man page for each program
# it installs, lintian reports no error and no missing man page, what
# their units and init script run is in the package, the programs run from the
# unpacked tree (nothing of the build tree), the agent is started as the
# driver-domain image starts it, and the three install, configure and purge
# cleanly in a throwaway root (dpkg --root) without touching this system.
source "$(dirname "$0")/../functions.sh"
requires dpkg-buildpackage dpkg-checkbuilddeps dh lintian dpkg-deb dpkg
cd "$TOP"
miss=$(dpkg-checkbuilddeps 2>&1) || skip "build dependencies missing (make deps): $miss"
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# ---- make deb, into the temp dir ----
O=$TEST_TMP/o
make -s O="$O" deb >"$TEST_TMP/make-deb.out" 2>&1 ||
    fail "make deb failed: $(tail -n 30 "$TEST_TMP/make-deb.out")"
cat "$TEST_TMP/make-deb.out"
grep '^lintian: E:' "$TEST_TMP/make-deb.out" && fail "lintian errors"
grep 'no-manual-page' "$TEST_TMP/make-deb.out" && fail "lintian: a program without its man page"
grep -q '^make-deb: lintian: 0 errors' "$TEST_TMP/make-deb.out" || fail "no lintian summary"
deb() { local f=("$O"/deb/"$1"_*.deb); [ -f "${f[0]}" ] || fail "no $1 .deb in $O/deb"; echo "${f[0]}"; }
n=$(ls "$O"/deb/*.deb | wc -l)
expect_eq "number of .debs" "$n" 3

# ---- each package's key files and man pages (dpkg-deb -c) ----
declare -A KEY
KEY[understudy-dom0]="usr/sbin/shadowd usr/sbin/shadowd-priv usr/sbin/shadowctl
    etc/understudy/shadowd.conf lib/systemd/system/shadowd.service
    usr/lib/sysusers.d/understudy-dom0.conf usr/share/man/man5/shadowd.conf.5.gz"
KEY[understudy-driverdom]="usr/sbin/understudy-agent usr/libexec/understudy/understudy-agent
    usr/libexec/understudy/blkback usr/libexec/understudy/netback usr/libexec/understudy/sndback
    usr/libexec/understudy/understudy-agent-supervise lib/systemd/system/understudy-agent.service
    etc/init.d/understudy-agent"
KEY[understudy-guest]="usr/lib/$MA/nbdkit/plugins/nbdkit-understudy-blk-plugin.so
    usr/sbin/understudy-netfront usr/sbin/understudy-sndfront
    usr/lib/$MA/alsa-lib/libasound_module_pcm_understudy.so
    usr/lib/$MA/alsa-lib/libasound_module_ctl_understudy.so
    usr/share/alsa/alsa.conf.d/50-understudy.conf etc/alsa/conf.d/50-understudy.conf
    lib/systemd/system/understudy-blkfront@.service lib/systemd/system/understudy-netfront@.service
    lib/systemd/system/understudy-sndfront@.service"
X=$TEST_TMP/x
mkdir -p "$X"
for p in understudy-dom0 understudy-driverdom understudy-guest; do
    d=$(deb $p)
    list=$(dpkg-deb -c "$d" | awk '{print $6}' | sed 's|^\./||')
    for f in ${KEY[$p]}; do
        grep -qx "$f" <<<"$list" || fail "$p: no $f in $(basename "$d")"
    done
    # Each program it installs, and each nbdkit plugin, has its man page in it
    # (man/, installed by install.mk, compressed by dh_compress).
    for f in $(grep -E '^usr/s?bin/[^/]+$' <<<"$list"); do
        grep -qxE "usr/share/man/man[18]/${f##*/}\.[18]\.gz" <<<"$list" ||
            fail "$p: $f has no man page in $(basename "$d")"
    done
    for f in $(grep -E '/nbdkit/plugins/[^/]+\.so$' <<<"$list"); do
        f=${f##*/}
        grep -qx "usr/share/man/man1/${f%.so}.1.gz" <<<"$list" ||
            fail "$p: the nbdkit plugin $f has no man page in $(basename "$d")"
    done
    log "$p: $(wc -l <<<"$list") entries, the $(wc -w <<<"${KEY[$p]}") key ones present"
    dpkg-deb -x "$d" "$X"
done
expect_eq "dom0 conffiles" "$(dpkg-deb --ctrl-tarfile "$(deb understudy-dom0)" | tar -xOf - ./conffiles)" \
    /etc/understudy/shadowd.conf

# Where Debian's nbdkit looks for plugins.
if command -v nbdkit >/dev/null; then
    pd=$(nbdkit --dump-config | sed -n 's/^plugindir=//p')
    [ -f "$X$pd/nbdkit-understudy-blk-plugin.so" ] || fail "the plugin is not in nbdkit's plugindir $pd"
fi
# The shipped configs are installed unchanged.
cmp "$X/lib/systemd/system/shadowd.service" configs/systemd/shadowd.service || fail "shadowd.service changed"
cmp "$X/etc/understudy/shadowd.conf" configs/shadowd/shadowd.conf || fail "shadowd.conf changed"
expect_eq "alsa conf.d link" "$(readlink "$X/etc/alsa/conf.d/50-understudy.conf")" \
    /usr/share/alsa/alsa.conf.d/50-understudy.conf

# ---- what the units and the init script run is in the packages ----
# An absolute program outside them must come from a package they depend on.
dep_of() { # PROGRAM: the package shipping it is in some package's Depends
    local owner
    owner=$(dpkg -S "$1" 2>/dev/null | head -n1 | cut -d: -f1) || true
    [ -n "$owner" ] || return 1
    for p in understudy-dom0 understudy-driverdom understudy-guest; do
        dpkg-deb -f "$(deb $p)" Depends | tr ',' '\n' | grep -qE "^ *$owner( |$)" && return 0
    done
    return 1
}
deps=()
for u in "$X"/lib/systemd/system/*.service; do
    while IFS= read -r line; do
        prog=${line#*=}
        prog=${prog#[-@+!]}
        prog=${prog%% *}
        if [ -x "$X$prog" ]; then
            :
        elif dep_of "$prog"; then
            log "$(basename "$u"): $prog from a dependency"
            deps+=("$prog")
        else
            fail "$(basename "$u"): $prog is neither in the packages nor a dependency's"
        fi
    done < <(grep -E '^Exec(Start|StartPre|StartPost|Stop|Reload)=' "$u")
done
# systemd's own check of each unit, on the unpacked tree with this system's
# units beside it and the dependencies' programs as stand-ins.
if command -v systemd-analyze >/dev/null && [ -d /lib/systemd/system ]; then
    V=$TEST_TMP/verify
    mkdir -p "$V"
    cp -a "$X/." "$V/"
    cp -an /lib/systemd/system/. "$V/lib/systemd/system/"
    for prog in "${deps[@]}"; do mkdir -p "$V$(dirname "$prog")" && : >"$V$prog" && chmod 755 "$V$prog"; done
    for u in "$X"/lib/systemd/system/*.service; do
        n=$(basename "$u")
        n=${n/@./@0.}
        out=$(systemd-analyze verify --root="$V" "$n" 2>&1 | grep -E 'understudy|shadowd' || true)
        [ -z "$out" ] || fail "systemd-analyze verify $n: $out"
    done
    log "systemd-analyze verify: every unit clean"
fi
# The blkfront unit names nbdkit's plugin by its short name: it must be there.
plug=$(sed -n 's/^ExecStart=.*nbdkit .* \([a-z-]*\) device=.*/\1/p' "$X/lib/systemd/system/understudy-blkfront@.service")
[ -n "$plug" ] && [ -f "$X/usr/lib/$MA/nbdkit/plugins/nbdkit-$plug-plugin.so" ] ||
    fail "blkfront unit: plugin '$plug' not shipped"
for v in $(grep -oE '^[A-Z]+=/usr/[^ ]+' "$X/etc/init.d/understudy-agent" | cut -d= -f2); do
    [ -x "$X$v" ] || fail "init script: $v not in the package"
done
[ -x "$X/usr/sbin/understudy-agent" ] || fail "the agent's sbin link is broken"
# The agent finds its backends beside the file it runs from (/proc/self/exe).
for b in blkback netback sndback; do
    [ -x "$(dirname "$(readlink -f "$X/usr/sbin/understudy-agent")")/$b" ] || fail "$b not beside the agent"
done

# ---- the agent starts as the driver-domain image starts it ----
want=$(sed -n 's|^ *[^ ]*/understudy-agent \(.*\)$|\1|p' configs/images/driverdom-init)
[ -n "$want" ] || fail "no agent command line in configs/images/driverdom-init"
expect_eq "unit's agent arguments" \
    "$(sed -n 's|^ExecStart=/usr/sbin/understudy-agent ||p' "$X/lib/systemd/system/understudy-agent.service")" "$want"
expect_eq "init script's agent arguments" \
    "$(sed -n 's|^ARGS="\(.*\)"$|\1|p' "$X/etc/init.d/understudy-agent")" "$want"
grep -qx 'Restart=always' "$X/lib/systemd/system/understudy-agent.service" || fail "agent unit: not Restart=always"
sh -n "$X/etc/init.d/understudy-agent" || fail "init script: syntax"

# ---- the programs run from the unpacked tree, with nothing of the build ----
for f in $(find "$X" -type f \( -name '*.so' -o -perm -u+x \)); do
    [ "$(head -c 4 "$f" | tail -c 3)" = ELF ] || continue
    readelf -d "$f" | grep -qE 'RPATH|RUNPATH' && fail "$f has an RPATH/RUNPATH"
    ldd "$f" 2>&1 | grep -q 'not found' && fail "$f: $(ldd "$f" | grep 'not found')"
    grep -q "$O/deb-build" "$f" && fail "$f names the build tree"
done
for p in usr/sbin/shadowd usr/sbin/shadowctl usr/sbin/understudy-agent usr/sbin/understudy-netfront \
    usr/sbin/shadowd-priv usr/sbin/understudy-sndfront; do
    "$X/$p" --help >/dev/null 2>&1 || fail "$p --help failed: $("$X/$p" --help 2>&1 | head -3)"
done
if command -v nbdkit >/dev/null; then
    nbdkit "$X/usr/lib/$MA/nbdkit/plugins/nbdkit-understudy-blk-plugin.so" --dump-plugin >/dev/null 2>&1 ||
        fail "nbdkit cannot load the plugin from the package"
fi

# ---- install, configure and purge in a throwaway root ----
# Maintainer scripts run chrootless with DPKG_ROOT set; the helpers they call
# (deb-systemd-helper, update-rc.d, systemd-sysusers) act inside that root.
# What they could have done to this system must come out unchanged (only
# their own names: other work may change this system meanwhile).
R=$TEST_TMP/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers"
: >"$R/var/lib/dpkg/status"
hoststate() {
    { grep -E '^(shadowd|understudy)' /etc/passwd /etc/group
      dpkg-query -W 'understudy-*' 2>/dev/null
      find /etc/systemd/system /etc/init.d /etc/rc?.d /etc/understudy /etc/alsa /usr/sbin /usr/libexec \
          /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked \
          -printf '%p %l\n' 2>/dev/null | grep -E 'understudy|shadowd' | sort; } || true
}
before=$(hoststate)
DP=(dpkg --root="$R" --force-not-root --force-script-chrootless --force-depends --log="$TEST_TMP/dpkg.log")
"${DP[@]}" -i "$(deb understudy-dom0)" "$(deb understudy-driverdom)" "$(deb understudy-guest)" \
    >"$TEST_TMP/dpkg-i.out" 2>&1 || fail "dpkg -i into $R: $(cat "$TEST_TMP/dpkg-i.out")"
for p in understudy-dom0 understudy-driverdom understudy-guest; do
    expect_eq "$p status" "$(dpkg-query --root="$R" -W -f='${Status}' $p)" "install ok installed"
done
[ -f "$R/etc/understudy/shadowd.conf" ] || fail "no shadowd.conf in the root"
# The driver domain's agent is enabled on install; shadowd waits for the operator.
[ -L "$R/etc/systemd/system/multi-user.target.wants/understudy-agent.service" ] ||
    fail "understudy-agent.service not enabled in the root"
[ -e "$R/etc/systemd/system/multi-user.target.wants/shadowd.service" ] && fail "shadowd.service enabled on install"
if command -v systemd-sysusers >/dev/null; then
    grep -q '^shadowd:' "$R/etc/passwd" || fail "no shadowd user in the root's /etc/passwd"
fi
"${DP[@]}" --purge understudy-guest understudy-driverdom understudy-dom0 >"$TEST_TMP/dpkg-p.out" 2>&1 ||
    fail "dpkg --purge in $R: $(cat "$TEST_TMP/dpkg-p.out")"
left=$(cd "$R" && find . -type f -o -type l | grep -vE '^\./(var/lib/dpkg|var/lib/systemd|etc/(passwd|group|shadow|gshadow|\.pwd\.lock)-?$)' |
    grep -v '\.dpkg-' || true)
[ -z "$left" ] || fail "left in the root after purge: $left"
[ -e "$R/etc/systemd/system/multi-user.target.wants/understudy-agent.service" ] &&
    fail "understudy-agent.service still enabled after purge"
expect_eq "this system's state" "$(hoststate)" "$before"
log "installed and purged in $R; this system untouched"
exit 0
