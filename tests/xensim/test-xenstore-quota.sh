#!/usr/bin/env bash
# 4.17's default quotas for unprivileged domains, with xenstored's errors:
# node size (2048-byte record: ENOSPC), permissions per node (5: ENOSPC),
# watches (128, E2BIG past it), transactions per connection (10, ENOSPC past
# it), nodes per domain (1000, ENOSPC) counted by owner, nodes touched per
# transaction (1024). dom0 is exempt from all of them.
source "$(dirname "$0")/xs-functions.sh"
start_sim
g=$(new_dom g)
x() { head -c "$1" /dev/zero | tr '\0' x; }

# A record is 24 bytes + 8 per permission + value + children names.
expect_out "node size" "$(lines OK "!ENOSPC" "$(x 2015)" OK)" -- \
    gxc $g "write data/big $(x 2015)" "write data/big $(x 2016)" "read data/big" \
    "write data/big2 $(x 2000)"
expect_eq "dom0 exempt" "$(xc "write /q/big $(x 4000)")" OK

expect_out "perms per node" "$(lines OK OK '!ENOSPC' "n$g,r0,r0,r0,r0" '!ENOSPC')" -- \
    gxc $g "write data/p x" "chmod data/p n$g,r0,r0,r0,r0" "chmod data/p n$g,r0,r0,r0,r0,r0" \
    "perms data/p" "chmod data/big n$g,r0"
expect_eq "dom0 exempt" "$(xc "chmod /q/big n0,r1,r2,r3,r4,r5,r6")" OK

cmds=()
for i in $(seq 1 130); do cmds+=("watch data w$i"); done
out=$(gxc $g "${cmds[@]}" | grep -v '^data ')
expect_eq "watches allowed" "$(echo "$out" | grep -c '^OK$')" 129
expect_eq "watch past the quota" "$(echo "$out" | tail -1)" '!E2BIG'
cmds=()
for i in $(seq 1 200); do cmds+=("watch /q w$i"); done
expect_eq "dom0 watches" "$(xc "${cmds[@]}" | grep -c '^OK$')" 200

cmds=()
for i in $(seq 1 12); do cmds+=("start t$i"); done
expect_out "transactions" "$(lines OK OK OK OK OK OK OK OK OK OK OK '!ENOSPC' OK OK)" -- \
    gxc $g "${cmds[@]}" "end t1 F" "start t13"
cmds=()
for i in $(seq 1 30); do cmds+=("start t$i"); done
expect_eq "dom0 transactions" "$(xc "${cmds[@]}" | grep -c '^OK$')" 30

# Nodes per domain: the 11 libxl gave it count, up to 1000 in all.
owned() { xenstore-ls -p / | grep -c "(n$g[,)]"; }
gxc $g "rm data/big" "rm data/big2" "rm data/p" >/dev/null
expect_eq "nodes libxl gave the guest" "$(owned)" 11
cmds=()
for i in $(seq 0 1000); do cmds+=("write data/d$((i / 30))/n$((i % 30)) x"); done
out=$(gxc $g "${cmds[@]}")
expect_eq "writes before the quota" "$(echo "$out" | grep -n -m1 -v '^OK$')" '958:!ENOSPC'
expect_eq "owned at the quota" "$(owned)" 1000
expect_out "full" "$(lines '!ENOSPC' OK OK '!ENOSPC')" -- \
    gxc $g "write data/d0/extra x" "rm data/d0/n0" "write data/d0/extra x" "write data/d0/n0 x"
# The count follows ownership: a node dom0 gives the guest counts against it.
expect_out "gift" "$(lines OK OK)" -- xc "chmod /q/big n$g" "write /q/big small"
expect_out "owner's quota" "$(lines OK '!ENOSPC' OK OK)" -- \
    gxc $g "rm data/d1/n0" "write data/d1/n0 x" "rm data/d1/n1" "write data/d1/n0 x"
expect_eq "owned with the gift" "$(owned)" 1000
cmds=()
for i in $(seq 0 1100); do cmds+=("write /q/many/d$((i / 30))/n$((i % 30)) x"); done
expect_eq "dom0 nodes" "$(xc "${cmds[@]}" | grep -vc '^OK$')" 0

# Nodes touched in one transaction.
cmds=("start t")
for i in $(seq 0 1030); do cmds+=("read@t data/m$i"); done
out=$(gxc $g "${cmds[@]}" "end t T")
expect_eq "first refused read" "$(echo "$out" | grep -n -m1 -v -e '^OK$' -e '^!ENOENT$')" \
    '1025:!ENOSPC'
expect_eq "commit of a failed transaction" "$(echo "$out" | tail -1)" '!ENOMEM'
exit 0
