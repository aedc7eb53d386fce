#!/usr/bin/env bash
# Debian's xenstore-* tools work against the sim's store unchanged: write
# creates parents, read, list, exists, ls -p, rm (recursive, tolerant of a
# missing node whose parent exists), chmod, long listings; a guest uses
# relative paths and finds the layout libxl gives a new domain.
source "$(dirname "$0")/xs-functions.sh"
requires xenstore-ls xenstore-read xenstore-write xenstore-rm xenstore-list xenstore-exists \
    xenstore-chmod
start_sim

xenstore-write /tools/a/b/c hello /tools/x 1 || fail "xenstore-write"
expect_eq "read" "$(xenstore-read /tools/a/b/c)" hello
expect_eq "created parent is empty" "$(xenstore-read /tools/a/b)" ""
expect_eq "list" "$(xenstore-list /tools | tr '\n' ' ')" "a x "
xenstore-exists /tools/a/b || fail "exists: /tools/a/b"
xenstore-exists /tools/none && fail "exists: /tools/none"
xenstore-ls -p /tools | grep -qE '^  c = "hello" .*\(n0\)$' || fail "ls -p: $(xenstore-ls -p /tools)"
expect_eq "ls -f" "$(xenstore-ls -f /tools/a)" '/tools/a/b = ""
/tools/a/b/c = "hello"'

# rm is recursive; a missing node is fine if its parent exists.
xenstore-rm /tools/a || fail "rm /tools/a"
xenstore-exists /tools/a/b/c && fail "rm left a child behind"
xenstore-rm /tools/none || fail "rm of a missing node under an existing parent"
xenstore-rm /tools/none/deeper 2>/dev/null && fail "rm below a missing parent must fail"
expect_eq "list after rm" "$(xenstore-list /tools)" x

# chmod, and its effect as ls -p shows it.
xenstore-chmod /tools/x n0 r3 || fail "chmod"
xenstore-ls -p /tools | grep -q '(n0,r3)' || fail "chmod not shown: $(xenstore-ls -p /tools)"
xenstore-chmod -r /tools b0 || fail "chmod -r"
xenstore-ls -p /tools | grep -q 'x = "1" .*(b0)' || fail "chmod -r: $(xenstore-ls -p /tools)"

# A directory listing over XENSTORE_PAYLOAD_MAX: libxenstore pages it (DIRECTORY_PART).
args=()
for i in $(seq 1 400); do args+=("/big/a-rather-long-child-name-$i" x); done
xenstore-write "${args[@]}" || fail "xenstore-write of 400 keys"
expect_eq "long listing" "$(xenstore-list /big | wc -l)" 400
expect_eq "long listing order" "$(xenstore-list /big | sed -n 400p)" a-rather-long-child-name-400

# A guest: libxl's layout and permissions, relative paths.
g=$(new_dom guest)
d=/local/domain/$g
expect_eq "name" "$(xenstore-read $d/name)" guest
expect_eq "domid" "$(xenstore-read $d/domid)" "$g"
vm=$(xenstore-read $d/vm)
expect_eq "vm uuid" "$(xenstore-read "$vm/uuid")" "${vm#/vm/}"
ls=$(xenstore-ls -p $d)
for want in "^name = \"guest\" .*\(n0,r$g\)$" "^device = \"\" .*\(n0,r$g\)$" \
    "^  event-channel = \"\" .*\(n$g\)$" "^control = \"\" .*\(n0,r$g\)$" \
    "^ shutdown = \"\" .*\(n$g\)$" "^ feature-poweroff = \"\" .*\(n$g\)$" \
    "^ platform-feature-xs_reset_watches = \"1\" .*\(n0,r$g\)$" "^data = \"\" .*\(n$g\)$" \
    "^drivers = \"\" .*\(n$g\)$" "^feature = \"\" .*\(n$g\)$" "^attr = \"\" .*\(n$g\)$" \
    "^error = \"\" .*\(n$g\)$" "^memory = \"\" .*\(n0,r$g\)$"; do
    echo "$ls" | grep -qE "$want" || fail "layout: no line like '$want' in:
$ls"
done
xenstore-ls -p /libxl/$g | grep -q 'type = "pv"' || fail "/libxl/$g: $(xenstore-ls -p /libxl/$g)"

expect_eq "guest reads its name" "$(as_dom $g xenstore-read name)" guest
as_dom $g xenstore-write data/k v || fail "guest write data/k"
expect_eq "dom0 sees it" "$(xenstore-read $d/data/k)" v
xenstore-ls -p $d/data | grep -q "k = \"v\" .*(n$g)" || fail "guest owns what it creates"
expect_eq "guest list" "$(as_dom $g xenstore-list data)" k
as_dom $g xenstore-rm data/k || fail "guest rm"
as_dom $g xenstore-write name evil 2>/dev/null && fail "guest wrote its read-only name"
as_dom $g xenstore-write /local/domain/0/name x 2>/dev/null && fail "guest wrote a dom0 node"
as_dom $g xenstore-write /tools/x 2 || fail "guest could not write a b0 node"
expect_eq "name unchanged" "$(xenstore-read $d/name)" guest
exit 0
