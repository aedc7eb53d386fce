#!/usr/bin/env bash
# Node permissions as xenstored 4.17 applies them: the first entry names the
# owner and gives everyone else their access; listed domains get theirs; the
# owner and dom0 may do anything; only they may SET_PERMS, and only dom0 may
# change the owner (EPERM). A guest gets EACCES for another domain's nodes,
# and ENOENT only where it could see the parent. New nodes inherit their
# parent's perms with the creator as owner. SET_TARGET gives the target's rights.
source "$(dirname "$0")/xs-functions.sh"
start_sim
a=$(new_dom a)
b=$(new_dom b)

expect_out "dom0 setup" "$(lines OK OK)" -- xc "write /p/a secret" "write /p/b x"
expect_out "guest without perms" "$(lines '!EACCES' '!EACCES' '!EACCES' '!EACCES' '!EACCES')" -- \
    gxc $a "read /p/a" "write /p/a x" "read /p/missing" "ls /p" "perms /p/a"

# Read on the parent: a missing child is ENOENT, an existing unreadable one EACCES.
expect_out "chmod /p" OK -- xc "chmod /p n0,r$a"
expect_out "read-only parent" "$(lines 'a b' '!EACCES' '!ENOENT' '!EACCES' '!EACCES')" -- \
    gxc $a "ls /p" "read /p/a" "read /p/missing" "write /p/new x" "rm /p/missing"

# Listed domains get their entry, the others the first entry's access.
expect_out "chmod /p/a" OK -- xc "chmod /p/a n0,b$a"
expect_out "a has b" "$(lines secret OK)" -- gxc $a "read /p/a" "write /p/a mine"
expect_out "b has none" '!EACCES' -- gxc $b "read /p/a"
expect_out "chmod r0" OK -- xc "chmod /p/a r0"
expect_out "default read" "$(lines mine '!EACCES')" -- gxc $b "read /p/a" "write /p/a x"

# The owner may change perms but not give the node away; others may not.
expect_out "owner a" OK -- xc "chmod /p/a n$a"
expect_out "owner a acts" "$(lines OK OK "n$a,r$b" '!EPERM')" -- \
    gxc $a "write /p/a again" "chmod /p/a n$a,r$b" "perms /p/a" "chmod /p/a n$b"
expect_out "non-owner" "$(lines again '!EACCES')" -- gxc $b "read /p/a" "chmod /p/a n$b"

# Another domain's home: readable by it and dom0 only, writable where libxl says.
expect_out "b in a's home" "$(lines '!EACCES' '!EACCES' '!EACCES')" -- \
    gxc $b "read /local/domain/$a/name" "write /local/domain/$a/data/x 1" \
    "ls /local/domain/$a"
expect_out "a in its home" "$(lines a '!EACCES' OK "n$a")" -- \
    gxc $a "read name" "write name x" "write data/sub/leaf 1" "perms data/sub"

# Inheritance: the creator owns the new node, the rest of the parent's perms stay.
expect_out "shared dir" OK -- xc "chmod /p n0,b$a,r$b"
expect_out "a creates" "$(lines OK "n$a,b$a,r$b")" -- gxc $a "write /p/new 1" "perms /p/new"
expect_out "b reads it" "$(lines 1 '!EACCES')" -- gxc $b "read /p/new" "write /p/new 2"
expect_out "dom0 creates" "$(lines OK "n0,b$a,r$b")" -- xc "write /p/dom0new 1" "perms /p/dom0new"

# SET_TARGET: b acts with a's rights (owner of a's nodes, a's entries elsewhere).
expect_out "settarget" OK -- xc "settarget $b $a"
expect_out "b as a" "$(lines a OK mine2)" -- \
    gxc $b "read /local/domain/$a/name" "write /local/domain/$a/data/x mine2" \
    "read /local/domain/$a/data/x"
expect_out "target of unknown domain" '!ENOENT' -- xc "settarget $b 999"

# Permission entries must name existing domains; an owner that does not exist is ENOENT.
expect_out "owner missing" '!ENOENT' -- xc "chmod /p/b n999"
expect_out "entry missing" "$(lines OK n0,r999)" -- xc "chmod /p/b n0,r999" "perms /p/b"

# Special nodes: only dom0 (their owner) may set their perms; GET_PERMS is EINVAL in 4.17.
expect_out "guest on @releaseDomain" '!EACCES' -- gxc $a "chmod @releaseDomain n0,r$a"
expect_out "bad special" "$(lines '!EINVAL' '!EINVAL')" -- \
    xc "chmod @fooDomain n0" "perms @releaseDomain"
exit 0
