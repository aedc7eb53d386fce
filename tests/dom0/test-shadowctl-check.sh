#!/usr/bin/env bash
# shadowctl check validates the live store against schema.md: it is clean on
# a good setup, reports each broken rule on its own line (and exits 1), and
# is clean again once they are fixed.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read xenstore-chmod
start_sim
sd_conf
sd_domain drv
sd_start
d=$(sd_wait_up drv)
g=$(new_dom guest)
dev_add "$g" "$d" 51712
fe_start "$g" 51712
wait_recovered "$g" 51712 0
expect_check_clean
fe=$(fe_dir "$g" 51712)
be=$(be_dir "$d" "$g" 51712)

# Keep shadowd, the frontend and the driver domain from reacting to what follows.
sd_stop
fe_freeze "$g" 51712
"$XENSIM" pause "$d"
xenstore-write "$fe/shadow/state" zombie "$fe/shadow/report" "x y" \
    "$fe/shadow/last-recovery" "detect=1 total=2" "$fe/shadow/generation" 1x
xenstore-chmod "$fe" "n$g"
xenstore-write "$be/cache" sometimes "$be/frontend-id" 99
xenstore-write "/local/domain/$d/data/understudy/heartbeat" soon
xenstore-write "/local/domain/$d/data/understudy/inject" "1 crash"
orphan=$(be_dir "$d" "$g" 51999)
xenstore-write "$orphan/frontend" "$(fe_dir "$g" 51999)" "$orphan/state" 1
xenstore-chmod "$orphan" "n$d" "r$g"
xenstore-write "$SD_DIR/drv/state" sleepy
# A "standby" that serves a device, and a standby state that is not a word.
xenstore-write "$SD_DIR/drv/standby" asleep "$SD_DIR/drv/standby-domid" "$d"
# A slot whose backend does not name it, and a held slot that is not there.
xenstore-write "$fe/shadow/slot-b/backend" "$be" "$fe/shadow/slot-b/backend-id" "$d" \
    "$fe/shadow/slot-b/state" 1 "$fe/shadow/standby" slot-a
out=$(sdctl check 2>&1) && fail "check passed a broken store:
$out"
echo "$out"
for want in "$fe/shadow/state: 'zombie' is not live, recovering or failed" \
    "$fe/shadow/report: 'x y': no decimal <seq> first" \
    "$fe/shadow/last-recovery: 'detect=1 total=2'" \
    "$fe/shadow/generation: '1x' is not a decimal" \
    "$fe: permissions n$g, want n$g,r$d" \
    "$be/cache: 'sometimes' is not none, writeback or volatile" \
    "$be/frontend-id: want $g" \
    "/local/domain/$d/data/understudy/heartbeat: 'soon' is not a decimal" \
    "/local/domain/$d/data/understudy/inject: permissions n$d, want n0,r$d" \
    "$orphan: orphaned: its frontend $(fe_dir "$g" 51999) is gone" \
    "$SD_DIR/drv/state: 'sleepy' is not a state word" \
    "$SD_DIR/drv/standby: 'asleep' is not a standby state word" \
    "$fe/backend: '$be' is under the standby domain $d (a standby serves nothing)" \
    "$be: a backend dir of the standby domain $d whose frontend '$fe' is not a slot" \
    "$orphan: a backend dir of the standby domain $d whose frontend" \
    "$be/frontend: '$fe', want the slot '$fe/shadow/slot-b'" \
    "$fe/shadow/standby: names slot-a, which is missing"; do
    echo "$out" | grep -qF "VIOLATION $want" || fail "not reported: $want"
done
expect_eq "violations counted" "$(echo "$out" | grep -c '^VIOLATION')" 17
sdctl check -q >/dev/null 2>&1 && fail "check -q passed"
[ -z "$(sdctl check -q 2>&1)" ] || fail "check -q printed something"

# Fixed, clean again.
xenstore-write "$fe/shadow/state" live "$fe/shadow/report" "1 timeout fixed" \
    "$fe/shadow/last-recovery" "detect=1 reconnect=2 replay=0 total=3" "$fe/shadow/generation" 0
xenstore-chmod "$fe" "n$g" "r$d"
xenstore-write "$be/cache" none "$be/frontend-id" "$g"
xenstore-write "/local/domain/$d/data/understudy/heartbeat" 5
xenstore-chmod "/local/domain/$d/data/understudy/inject" n0 "r$d" || fail chmod
xenstore-rm "$orphan"
xenstore-write "$SD_DIR/drv/state" up
xenstore-rm "$SD_DIR/drv/standby" "$SD_DIR/drv/standby-domid"
xenstore-rm "$fe/shadow/slot-b" "$fe/shadow/standby"
expect_check_clean
exit 0
