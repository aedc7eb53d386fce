#!/usr/bin/env bash
# shadowd runs in two parts (dom0-tools/README.md, "Privilege separation"),
# and its unprivileged part cannot call libxl: shadowd has no toolstack
# library in its maps (libxenlight, libxlutil, libvirt; the simulator's
# control client is not in its binary), runs as the unprivileged user with no
# capabilities and no_new_privs, and that user cannot reach the simulator's
# control socket (xensim's libxl); shadowd-priv, its child, holds the
# drivers and root. shadowd runs as its unit says (sd_supervise); a recovery
# works end to end; the state dir is the user's. A shadowd-priv killed makes
# shadowd exit with a clear error, and the unit's restart recovers; a
# shadowd killed takes its shadowd-priv with it.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read setpriv
[ "$(id -u)" -eq 0 ] || skip "shadowd drops root only when started as root"
user=nobody
getent passwd shadowd >/dev/null && user=shadowd
uid=$(id -u "$user") gid=$(id -g "$user")

start_sim
sd_conf
sd_domain drv
sd_supervise
D1=$(sd_wait_up drv)
G=$(new_dom guest)
dev_add "$G" "$D1" 51712
fe_start "$G" 51712
wait_recovered "$G" 51712 0
wait_for 10 sd_recorded_is drv 1

priv_of() { cat "/proc/$1/task/"*/children 2>/dev/null | tr ' ' '\n' | grep -m1 .; }
PRIV=$(priv_of "$SD_PID")
[ -n "$PRIV" ] || fail "shadowd $SD_PID has no child"
expect_eq "the child" "$(cat "/proc/$PRIV/comm")" shadowd-priv
sd_log_has "drivers in shadowd-priv, pid $PRIV" || fail "shadowd did not say where its drivers are"

# 1. shadowd cannot call libxl: none of the toolstack's libraries is mapped,
#    and the simulator's control client is not in the binary.
maps=$(awk '{print $6}' "/proc/$SD_PID/maps" | grep '\.so' | sort -u)
echo "$maps" | grep -qE 'libxenstore' || fail "test broken: shadowd maps no libxenstore either"
bad=$(echo "$maps" | grep -E 'libxenlight|libxlutil|libvirt|libxml2|libxenctrl|libxensim' || true)
[ -z "$bad" ] || fail "shadowd maps toolstack libraries: $bad"
awk '{print $6}' "/proc/$PRIV/maps" | grep -q libxenlight ||
    fail "test broken: shadowd-priv does not map libxenlight either"
nm "$SHADOWD" | grep -qE ' [TU] (xsim_ctl_|libxl_|vir)' && fail "shadowd has driver symbols"
nm "$BUILD/bin/shadowd-priv" | grep -q ' T xsim_ctl_create' || fail "test broken: no xsim_ctl_create in shadowd-priv"

# 2. It runs as the user, with nothing of root left.
st() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"; }
expect_eq "shadowd uids" "$(st "$SD_PID" Uid | tr -s '\t ' ' ')" "$uid $uid $uid $uid"
expect_eq "shadowd gids" "$(st "$SD_PID" Gid | tr -s '\t ' ' ')" "$gid $gid $gid $gid"
expect_eq "shadowd groups" "$(st "$SD_PID" Groups | xargs)" "$gid"
for c in CapInh CapPrm CapEff CapBnd CapAmb; do
    expect_eq "shadowd $c" "$(st "$SD_PID" $c)" 0000000000000000
done
expect_eq "shadowd no_new_privs" "$(st "$SD_PID" NoNewPrivs)" 1
expect_eq "shadowd-priv uid" "$(st "$PRIV" Uid | cut -f1)" 0
sd_log_has "running as user $user \(uid $uid, gid $gid\): no capabilities, no_new_privs" ||
    fail "the drop is not logged"

# 3. That user cannot reach the simulator's control socket (its "libxl"):
#    with every directory on the way open to it, connect is refused by the
#    socket's own permissions (root, 0600).
d=$XENSIM_DIR
while [ "$d" != / ]; do chmod o+x "$d"; d=$(dirname "$d"); done
out=$(setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all \
    --no-new-privs "$XENSIM" list 2>&1) && fail "user $user can use the control socket: $out"
echo "$out" | grep -q "Permission denied" || fail "refused for another reason: $out"
"$XENSIM" list >/dev/null || fail "test broken: root cannot use the control socket either"

# 4. A recovery end to end; the records are the user's.
"$XENSIM" crash "$D1"
wait_recovered "$G" 51712 1
D2=$(sd_domid drv)
[ "$D2" != "$D1" ] || fail "no new driver domain"
wait_for 10 sd_state_is drv up
expect_check_clean
expect_eq "state dir owner" "$(stat -c %u "$TEST_TMP/state")" "$uid"
expect_eq "devices file owner" "$(stat -c %u "$TEST_TMP/state/drv.devices")" "$uid"

# 5. shadowd-priv killed: shadowd exits with a clear error (status 1), its
#    unit starts both again, and the next crash is recovered.
old=$SD_PID
kill -KILL "$PRIV"
sd_wait_restarted
sd_log_has "shadowd\[.*\]: the privileged part is gone \(shadowd-priv \(pid $PRIV\): it closed the channel; it was killed by signal 9\): exiting so that the service manager restarts shadowd" ||
    fail "no clear error when shadowd-priv died: $(grep -A3 "pid $PRIV" "$SD_LOG" | tail -5)"
sd_log_has "supervisor: shadowd exited with status 1" || fail "shadowd did not exit with status 1"
[ -e "/proc/$old" ] && fail "the old shadowd ($old) is still there"
PRIV2=$(priv_of "$SD_PID")
[ -n "$PRIV2" ] && [ "$PRIV2" != "$PRIV" ] || fail "no new shadowd-priv"
"$XENSIM" crash "$D2"
wait_recovered "$G" 51712 2
D3=$(sd_domid drv)
[ "$D3" != "$D2" ] || fail "no new driver domain after the restart"
wait_for 10 sd_state_is drv up

# 6. shadowd killed: its shadowd-priv goes with it (PR_SET_PDEATHSIG, and
#    the closed channel), so no privileged orphan is left.
sd_kill9
sd_wait_restarted
gone() { [ ! -e "/proc/$1" ] || [ "$(sed -n 's/^State:[[:space:]]*//p' "/proc/$1/status" | cut -c1)" = Z ]; }
wait_for 5 gone "$PRIV2"
wait_for 10 sd_state_is drv up
exit 0
