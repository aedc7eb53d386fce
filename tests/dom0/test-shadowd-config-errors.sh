#!/usr/bin/env bash
# shadowd -n checks a config file and exits, like relayd -n: every mistake
# gets its own "FILE:LINE: message" and exit status 1; a good file prints
# "configuration OK" (with -v, the config as understood, top-level defaults
# applied). The libxl driver's check parses the operator's xl config with
# libxlutil, without Xen; the libvirt driver's reads the domain XML with
# libxml2, without libvirt.
source "$(dirname "$0")/../functions.sh"
SHADOWD=$BUILD/bin/shadowd
C=$TEST_TMP/s.conf
X=$TEST_TMP/drv.cfg

# bad WANT-REGEX LINE...: a config of LINE... must fail -n with WANT on stderr.
bad() {
    local want=$1 out
    shift
    printf '%s\n' "$@" >"$C"
    local rc=0
    out=$("$SHADOWD" -n -c "$C" 2>&1) || rc=$?
    [ $rc -ne 0 ] || fail "accepted, want '$want':
$(cat -n "$C")"
    [ $rc -eq 1 ] || fail "exit status $rc, want 1"
    echo "$out" | grep -qE -- "$want" || fail "want '$want', got:
$out
for:
$(cat -n "$C")"
}
dom() {
    printf 'domain d {\n driver xensim\n command /bin/sleep 1000\n'
    [ $# -eq 0 ] || printf '%s\n' "$@"
    printf '}\n'
}

bad "^$C:1: unknown option 'bogus'" "bogus 1" "$(dom)"
bad "^$C:1: domain 'd' has no driver" "domain d {" "}"
bad "^$C:2: unknown driver 'kvm' \(known: xensim, libxl, libvirt\)" "domain d {" " driver kvm" "}"
bad "^$C:1: domain 'd' \(xensim\) has no 'command'" "domain d {" " driver xensim" "}"
bad "^$C:1: domain 'd': command /no/such/agent: No such file" "domain d {" " driver xensim" \
    " command /no/such/agent" "}"
bad "^$C:4: 'heartbeat-timeout': '3' is not a duration \(a number with ms, s, m or h; or off\)" \
    "domain d {" " driver xensim" " command /bin/true" " heartbeat-timeout 3" "}"
bad "^$C:4: 'state-dir' is a global option" "domain d {" " driver xensim" " command /bin/true" \
    " state-dir /tmp" "}"
bad "^$C:1: 'command' belongs inside a domain block" "command /bin/true" "$(dom)"
bad "^$C:5: domain 'd' declared twice \(first at $C:1\)" "$(dom)" "$(dom)"
out=$("$SHADOWD" -n -c "$C" 2>&1)
expect_eq "errors for a refused block" "$(echo "$out" | wc -l)" 1
bad "^$C:3: end of file inside domain 'd' \(opened at line 1\): missing '\}'" "domain d {" \
    " driver xensim" " command /bin/true"
bad "^$C:1: unterminated quoted string" 'state-dir "/tmp' "$(dom)"
bad "^$C:1: unknown escape" 'state-dir "/t\q"' "$(dom)"
bad "^$C:1: 'state-dir' must be an absolute path, not 'var/lib'" "state-dir var/lib" "$(dom)"
bad "^$C:4: 'xl-config' is for the libxl driver; domain 'd' uses xensim" "$(dom " xl-config /x.cfg")"
bad "^$C:1: domain 'd' \(libxl\) has no 'xl-config'" "domain d {" " driver libxl" "}"
bad "^$C:1: domain 'd': backoff-initial is longer than backoff-max" \
    "$(dom " backoff-initial 1m" " backoff-max 10s")"
bad "^$C:4: 'restart-budget': '100' is not a whole number from 0 to 64" "$(dom " restart-budget 100")"
bad "^$C:1: no domain blocks: nothing to watch over" "state-dir /tmp"
bad "^$C:1: domain name '5': use 1 to 63 of" "domain 5 {" "}"
bad "^$C:1: expected: domain NAME \{" "domain d" "}"
bad "^$C:2: domain blocks do not nest" "domain d {" "domain e {" "}" "}"
bad "^$C:5: 'restart-delay' given twice in domain d \(first at line 4\)" \
    "$(dom " restart-delay 1s" " restart-delay 2s")"
bad "^$C:1: '\}' without an open domain block" "}" "$(dom)"
bad "^$C:4: 'env' takes NAME=VALUE, not 'FOO'" "$(dom " env FOO")"
bad "^$C:1: 'ignore-backend-key': 'a\*b' is not a key name" "ignore-backend-key a*b" "$(dom)"
bad "^$C:2: 'report-window' must be more than 0" "state-dir /tmp" "report-window 0s" "$(dom)"
# Every mistake is reported, not just the first.
printf '%s\n' "bogus 1" "domain d {" " driver xensim" " command /bin/true" " frob 2" \
    " heartbeat-timeout soon" "}" "run-dir relative" >"$C"
out=$("$SHADOWD" -n -c "$C" 2>&1) && fail "accepted a config with four mistakes"
expect_eq "errors reported" "$(echo "$out" | grep -c "^$C:")" 4
"$SHADOWD" -n -c "$TEST_TMP/none.conf" 2>&1 | grep -q "none.conf: cannot open: No such file" ||
    fail "missing file"
# Without -n, a bad config stops shadowd at once.
printf 'bogus 1\n' >"$C"
"$SHADOWD" -c "$C" >/dev/null 2>&1 && fail "shadowd ran with a bad config"

# A good file; top-level domain options are defaults.
printf '%s\n' "# comment" "state-dir /var/lib/x   # trailing comment" 'heartbeat-timeout 2s' \
    "domain d {" " driver xensim" ' command /bin/sleep "10 00"' " env A=b" "}" \
    "domain e {" " driver xensim" " command /bin/true" " heartbeat-timeout off" "}" >"$C"
out=$("$SHADOWD" -n -v -c "$C") || fail "good config refused: $out"
echo "$out" | grep -q "^$C: configuration OK (2 driver domains)$" || fail "no OK line: $out"
echo "$out" | grep -q '^    command "/bin/sleep" "10 00"$' || fail "quoting: $out"
expect_eq "default applied" "$(echo "$out" | sed -n '/^domain d/,/^}/p' | grep -c 'heartbeat-timeout 2s')" 1
expect_eq "override kept" "$(echo "$out" | sed -n '/^domain e/,/^}/p' | grep -c 'heartbeat-timeout off')" 1
echo "$out" | grep -q "^    restart-budget 5$" || fail "built-in default"

# The libxl driver: the xl config is parsed by libxlutil, mistakes with their line.
printf '%s\n' 'name = "drv"' 'type = "pvh"' 'kernel = "/boot/vmlinuz"' 'memory = 512' \
    'vcpus = 2' 'driver_domain = 1' \
    "disk = [ 'format=raw, vdev=xvda, access=rw, target=/var/lib/drv.img' ]" \
    "vif = [ 'bridge=xenbr0,mac=00:16:3e:00:00:01,rate=10Mb/s' ]" 'on_crash = "preserve"' >"$X"
printf '%s\n' "domain drv {" " driver libxl" " xl-config $X" "}" >"$C"
out=$("$SHADOWD" -n -c "$C" 2>&1) || fail "good xl config refused: $out"
printf '%s\n' 'name = "drv"' 'kernel = "/k"' 'frobnicate = 1' >"$X"
bad "^$X:3: 'frobnicate' is not supported by shadowd's libxl driver" "domain drv {" " driver libxl" \
    " xl-config $X" "}"
printf '%s\n' 'name = "other"' 'kernel = "/k"' >"$X"
bad "name = \"other\", but shadowd's config calls this domain 'drv'" "domain drv {" \
    " driver libxl" " xl-config $X" "}"
printf '%s\n' 'name = "drv"' 'kernel = "/k"' "disk = [ 'vdev=xvda, bogus=1' ]" >"$X"
bad "^$C:1: domain 'drv': xl-config $X is not usable" "domain drv {" " driver libxl" \
    " xl-config $X" "}"
printf '%s\n' 'name = "drv"' 'kernel = "/k"' 'memory = = 3' >"$X"
bad "$X:3" "domain drv {" " driver libxl" " xl-config $X" "}"
printf '%s\n' 'name = "drv"' 'type = "pv"' >"$X"
bad "a pv domain needs kernel" "domain drv {" " driver libxl" " xl-config $X" "}"
printf '%s\n' 'name = "drv"' 'kernel = "/k"' "vif = [ 'mac=zz:16:3e:00:00:01' ]" >"$X"
bad "bad mac 'zz:16:3e:00:00:01'" "domain drv {" " driver libxl" " xl-config $X" "}"
printf '%s\n' 'name = "drv"' 'kernel = "/k"' 'cpu_weight = 0' >"$X"
bad "cpu_weight = 0: out of range \(1-65535\)" "domain drv {" " driver libxl" " xl-config $X" "}"
# The shipped driver domains' xl configs, late-vifs and boot-weight (libxl only).
for f in "$(cd "$(dirname "$0")/../../configs/xl" && pwd)"/drv-*.cfg; do
    n=$(sed -n 's/^name = "\(.*\)"/\1/p' "$f")
    printf '%s\n' "domain $n {" " driver libxl" " xl-config $f" " late-vifs on" \
        " boot-weight 1024" "}" >"$C"
    out=$("$SHADOWD" -n -v -c "$C" 2>&1) || fail "shipped $f refused: $out"
    echo "$out" | grep -q "^    late-vifs on$" || fail "late-vifs not shown: $out"
    echo "$out" | grep -q "^    boot-weight 1024$" || fail "boot-weight not shown: $out"
done
bad "^$C:4: 'late-vifs' is for the libxl driver; domain 'd' uses xensim" "$(dom " late-vifs on")"
bad "^$C:4: 'boot-weight' is for the libxl driver; domain 'd' uses xensim" "$(dom " boot-weight 512")"
bad "^$C:4: 'boot-weight': '65536' is not a whole number from 0 to 65535" \
    "$(dom " boot-weight 65536")"
bad "^$C:1: 'boot-weight' belongs inside a domain block" "boot-weight 512" "$(dom)"

# standby: on or off; the standby's name NAME.2 must be free.
bad "^$C:4: 'standby' takes on or off, not 'yes'" "$(dom " standby yes")"
bad "^$C:1: domain 'd': with standby on, its standby is called d.2, which is also a domain" \
    "$(dom " standby on")" "domain d.2 {" " driver xensim" " command /bin/true" "}"
n61=$(printf 'a%.0s' $(seq 62))
bad "^$C:1: domain '$n61': with standby on, the name must be at most 61 bytes" \
    "domain $n61 {" " driver xensim" " command /bin/true" " standby on" "}"
printf '%s\n' "standby on" "$(dom)" >"$C"
out=$("$SHADOWD" -n -v -c "$C") || fail "standby as a default refused: $out"
echo "$out" | grep -q "^    standby on$" || fail "standby default not applied: $out"

# The libvirt driver: the domain XML must be well-formed, a <domain type=...>
# named as in shadowd's config; libvirt-uri is global.
L=$TEST_TMP/drv.xml
lv() { printf '%s\n' "domain drv {" " driver libvirt" " libvirt-xml $L" "$@" "}"; }
printf '%s\n' "<domain type='test'>" "  <name>drv</name>" "  <memory>8192</memory>" \
    "  <os><type>hvm</type></os>" "</domain>" >"$L"
printf '%s\n' "libvirt-uri test:///default" "$(lv)" >"$C"
out=$("$SHADOWD" -n -v -c "$C" 2>&1) || fail "good libvirt config refused: $out"
echo "$out" | grep -q "^libvirt-uri test:///default$" || fail "libvirt-uri not shown: $out"
bad "^$C:1: domain 'drv' \(libvirt\) has no 'libvirt-xml'" "domain drv {" " driver libvirt" "}"
bad "^$C:4: 'libvirt-xml' is for the libvirt driver; domain 'd' uses xensim" \
    "$(dom " libvirt-xml $L")"
bad "^$C:1: 'libvirt-uri': 'a b' holds a space" 'libvirt-uri "a b"' "$(lv)"
bad "^$C:2: 'libvirt-uri' is a global option" "domain drv {" " libvirt-uri test:///default" \
    " driver libvirt" " libvirt-xml $L" "}"
printf '%s\n' "<domain type='test'>" "  <name>other</name>" "</domain>" >"$L"
bad "^$L:2: <name>other</name>, but shadowd's config calls this domain 'drv'" "$(lv)"
bad "^$C:1: domain 'drv': libvirt-xml $L is not usable" "$(lv)"
printf '%s\n' "<domain type='test'>" "  <name>drv</name>" "  <memory>" "</domain>" >"$L"
bad "^$L:[0-9]+: not well-formed XML" "$(lv)"
printf '%s\n' "<domain>" "  <name>drv</name>" "</domain>" >"$L"
bad "^$L:1: <domain> has no type=" "$(lv)"
printf '%s\n' "<vm type='test'>" "  <name>drv</name>" "</vm>" >"$L"
bad "^$L:1: the root element is <vm>, not <domain>" "$(lv)"
printf '%s\n' "<domain type='test'>" "</domain>" >"$L"
bad "^$L:1: <domain> has no <name>" "$(lv)"
rm -f "$L"
bad "^$L: No such file or directory" "$(lv)"
exit 0
