#!/usr/bin/env bash
# Bad toolstack keys: for each, netback writes an error node ("<errno>
# <message>") naming the key, goes Closed and stays up; correcting the key
# retries the setup (InitWait). Bad frontends: no request-rx-copy, no
# feature-rx-notify, more queues than offered, an unmappable ring - each an
# error node and Closing, and the next good connection works.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_net
start_sim
drv=$(new_dom drv)
guest=$(new_dom guest)
be=$(vif_be "$drv" "$guest" $DEV)
n=0
for case in "mac=zz:16:3e:12:34:56|mac.*is not a MAC address" \
    "mac=01:16:3e:12:34:56|is a multicast address" \
    "bridge=nosuch0|bridge nosuch0: No such device" \
    "bridge=br/0|is not an interface name" \
    "vifname=a:b|vifname 'a:b' is not an interface name" \
    "mtu=40|mtu 40 is below 68" "mtu=70000|mtu: not a number in 68..65535" \
    "mtu=15x|mtu: not a number" "rate=0,100|rate '0,100' is not" \
    "rate=1000|rate '1000' is not" "rate=100,|rate '100,' is not"; do
    kv=${case%%|*} want=${case#*|} key=${kv%%=*}
    n=$((n + 1))
    log "case $n: $kv"
    vif_add "$guest" "$drv" $DEV "$kv"
    netback_start "$drv" "$guest" $DEV
    wait_for 10 vif_state_is "$drv" "$guest" $DEV 6
    err=$(xenstore-read "$be/error") || fail "$kv: no error node"
    echo "$err" | grep -qE "^[0-9]+ .*$want" || fail "$kv: error '$err', want /$want/"
    netback_alive || fail "$kv: netback exited"
    # Corrected, the setup is retried.
    case $key in
    mac) xenstore-write "$be/mac" "$GUEST_MAC" ;;
    bridge) xenstore-write "$be/bridge" br0 ;;
    vifname) xenstore-write "$be/vifname" "nbvif$n" ;;
    *) xenstore-rm "$be/$key" ;;
    esac
    wait_for 10 vif_state_is "$drv" "$guest" $DEV 2
    xenstore-read "$be/error" 2>/dev/null && fail "$kv: error node left after the fix"
    kill -TERM $NB_PID
    netback_wait_exit 10
    xenstore-rm "$be" "$(vif_fe "$guest" $DEV)"
done

vif_add "$guest" "$drv" $DEV
netback_start "$drv" "$guest" $DEV
wait_for 10 vif_state_is "$drv" "$guest" $DEV 2
out=$TEST_TMP/front.out
for opts in "--no-rx-copy|request-rx-copy=1" "--no-rx-notify|feature-rx-notify=1" \
    "--queues 5|multi-queue-num-queues" "--bogus-ring|mapping ring"; do
    o=${opts%%|*} want=${opts#*|}
    # shellcheck disable=SC2086
    netfront "$guest" $DEV --timeout 5 $o connect >"$out" 2>&1 && fail "$o: connected"
    grep -q "$want" "$out" || fail "$o: $(cat "$out")"
    vif_state_is "$drv" "$guest" $DEV 5 || fail "$o: backend state $(vif_state "$drv" "$guest" $DEV), not Closing"
done
netfront "$guest" $DEV connect close >"$out" 2>&1 || fail "good frontend after: $(cat "$out")"
netback_alive || fail "netback exited"
exit 0
