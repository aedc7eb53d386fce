# tests/frontends/net-functions.sh - the network class on xensim, in network
# namespaces of this machine. Source after tests/functions.sh; call start_sim
# and net_ns first.
#
#   net_ns                 three namespaces: $NS_G (the guest: our TAP), $NS_D (the
#                          driver domain: bridge br0 with veth vd0), $NS_S (the server:
#                          veth vs0 = 10.0.0.1/24). Removed on exit.
#   in_g / in_d / in_s CMD...   run CMD in that namespace
#   vif_fe GUEST DEVID / vif_be DRV GUEST DEVID     the two dirs
#   vif_add GUEST DRV DEVID [K=V...]   a vif as libxl writes it (mac $MAC, bridge br0),
#                          frontend dir first; K=V are more backend keys
#   netback_dom NAME       a driver domain whose main process is netback in $NS_D, started
#                          once its backend dir is written (go file); prints the domid
#   netback_go NAME GUEST DEVID   write go.NAME (its backend dir)
#   netfront_dom NAME [ARGS...]   a guest domain running understudy-netfront in $NS_G on
#                          device/vif/$VIF (ASan-built: its log is checked); prints domid
#   guest_ip               wait for eth0 in $NS_G, give it 10.0.0.2/24, up
#   nf_key GUEST KEY       a key of the frontend dir (empty if absent)
#   nf_live_n GUEST N      shadow/state live and shadow/recoveries >= N
#   nf_recovering GUEST    shadow/state recovering
#   net_crash_link_kept GUEST DOMID   crash driver domain DOMID (setting T_CRASH, ms),
#                          wait for GUEST's frontend to be recovering, and 2 s into the
#                          outage check that eth0 is up and 10.0.0.1 still in its
#                          neighbour table (the carrier kept on through a recovery)
#   rewire_vif GUEST DEVID DRV   point the frontend at DRV's backend in place, bump generation
#   vif_be_add GUEST DRV DEVID [K=V...]   only the backend dir (a new driver domain's)
#   replace_netback OLD NEW GUEST   the stand-in toolstack's recovery: destroy OLD, start NEW
#                          with netback and a backend dir (plus $VIF_BE_KEYS), rewire
#   net_sanitizer_check / net_dump_logs   on every $TEST_TMP/*.log
#
# A driver domain with a network stack of its own (as a real one has), for a hot
# standby beside the serving domain (schema.md, "The hot standby's connection"):
#   net_dom_ns NAME        namespace $NS_D-NAME: bridge br0, uplinked by a veth
#                          (MTU $NET_DOM_MTU, 1500 by default) to $NS_D's br0, the
#                          LAN the server is on; removed on exit. Not in a subshell.
#   netback_dom_ns NAME    a domain NAME whose main process is netback in $NS_D-NAME
#                          (net_dom_ns first), started by netback_go; prints the domid
#   vif_standby GUEST NAME SLOT [K=V...]   a hot standby: domain NAME with netback in a
#                          namespace of its own, the slot FE/shadow/SLOT (backend,
#                          backend-id, state, the toolstack's handle and mac), NAME's
#                          backend dir naming it (K=V: more backend keys),
#                          FE/shadow/standby=SLOT; waits until the slot and the backend
#                          are Connected. Sets SB (its domid). Not in a subshell.
#   vif_promote OLD GUEST DOMID   fence OLD (pause), point the vif at DOMID's backend
#                          (held in a slot), bump the generation, drop
#                          FE/shadow/standby; OLD is destroyed in the background. With
#                          VIF_STAMPS set, the time of the rewrite (ns) is appended there
#   vif_live_dir GUEST     the dir the live connection is in: the slot whose backend
#                          is FE/backend, else FE

NETBACK=$BUILD/bin/netback
NETFRONT=$BUILD/bin/understudy-netfront
MAC=00:16:3e:4e:46:01
VIF=0
VIF_BE_KEYS=()  # more backend keys replace_netback writes (the recorded config)

net_ns() {
    requires ip
    [ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
    NS_G=nfg$$ NS_D=nfd$$ NS_S=nfs$$
    ip netns add "$NS_G" && ip netns add "$NS_D" && ip netns add "$NS_S" ||
        fail "ip netns add"
    on_exit "_net_ns_cleanup"
    in_d ip link add br0 type bridge && in_d ip link set br0 up &&
        in_d ip link add vd0 type veth peer name vs0 &&
        in_d ip link set vs0 netns "$NS_S" && in_d ip link set vd0 master br0 &&
        in_d ip link set vd0 up && in_s ip addr add 10.0.0.1/24 dev vs0 &&
        in_s ip link set vs0 up && in_s ip link set lo up && in_g ip link set lo up ||
        fail "network setup"
    # No IPv6 chatter (DAD, router solicitations) in the counts.
    for ns in "$NS_G" "$NS_D" "$NS_S"; do
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    done
}
# Every process left in our namespaces (servers, probes; found by namespace, not
# by name), then the namespaces.
_net_ns_cleanup() {
    local ns
    for ns in "$NS_G" "$NS_D" "$NS_S"; do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
    return 0
}
in_g() { ip netns exec "$NS_G" "$@"; }
in_d() { ip netns exec "$NS_D" "$@"; }
in_s() { ip netns exec "$NS_S" "$@"; }

vif_fe() { echo "/local/domain/$1/device/vif/$2"; }
vif_be() { echo "/local/domain/$1/backend/vif/$2/$3"; }

vif_add() {
    local g=$1 d=$2 dev=$3
    shift 3
    local xsdev=$TPROG/dom0/xsdev
    [ -x "$xsdev" ] || fail "no $xsdev"
    "$xsdev" "$(vif_fe "$g" "$dev")" "n$g,r$d" backend="$(vif_be "$d" "$g" "$dev")" \
        backend-id="$d" state=1 handle="$dev" mac="$MAC" shadow/generation=0 ||
        fail "vif_add: frontend dir"
    "$xsdev" "$(vif_be "$d" "$g" "$dev")" "n$d,r$g" frontend="$(vif_fe "$g" "$dev")" \
        frontend-id="$g" online=1 state=1 handle="$dev" mac="$MAC" bridge=br0 type=vif \
        script=/etc/xen/scripts/vif-bridge "$@" || fail "vif_add: backend dir"
}

netback_dom() {
    local name=$1
    new_dom "$name" ip netns exec "$NS_D" sh -c \
        'f=$1; shift; while [ ! -s "$f" ]; do sleep 0.02; done; exec "$@" --backend "$(cat "$f")"' \
        sh "$TEST_TMP/go.$name" "$NETBACK"
}
netback_go() { vif_be "$(xensim_domid "$1")" "$2" "$3" >"$TEST_TMP/go.$1.tmp" && mv "$TEST_TMP/go.$1.tmp" "$TEST_TMP/go.$1"; }
xensim_domid() { "$XENSIM" info "$1" | sed -n 's/^domid=//p'; }

netfront_dom() {
    local name=$1
    shift
    new_dom "$name" ip netns exec "$NS_G" sh -c \
        'f=$1; shift; while [ ! -e "$f" ]; do sleep 0.02; done; exec "$@"' \
        sh "$TEST_TMP/go.$name" "$NETFRONT" --device "device/vif/$VIF" "$@"
}

_has_eth0() { in_g ip link show eth0; }
guest_ip() {
    wait_for 20 _has_eth0
    in_g ip addr add 10.0.0.2/24 dev eth0 && in_g ip link set eth0 up || fail "guest address"
}

# With shadowd (tests/dom0/dom0-functions.sh sourced, sd_conf written):
# net_sd_domain [OPTION...]: its driver domain "drv", the agent in NS_D
# starting netback for each vif, backoff 100 ms to 400 ms; OPTION... as
# sd_domain's.
net_sd_domain() {
    sd_domain drv "command ip netns exec $NS_D $AGENT --handler vif=$NETBACK --heartbeat-ms 100" \
        "backoff-initial 100ms" "backoff-max 400ms" "$@"
}
# net_sd_guest D [NETFRONT-ARG...]: the guest behind understudy-netfront
# (deadline 1 s) with vif $VIF of driver domain D: its address up, live, and
# recorded by shadowd. Sets g.
net_sd_guest() {
    local d=$1
    shift
    g=$(netfront_dom guest --deadline-ms 1000 "$@")
    vif_add "$g" "$d" $VIF
    touch "$TEST_TMP/go.guest"
    guest_ip
    wait_for 20 nf_live_n "$g" 0
    wait_for 10 sd_recorded_is drv 1
}

nf_key() { xenstore-read "$(vif_fe "$1" "$VIF")/$2" 2>/dev/null || true; }
nf_live_n() {
    [ "$(nf_key "$1" shadow/state)" = live ] && [ "$(nf_key "$1" shadow/recoveries)" -ge "$2" ] 2>/dev/null
}

nf_recovering() { [ "$(nf_key "$1" shadow/state)" = recovering ]; }
net_crash_link_kept() {
    local g=$1 d=$2 state
    T_CRASH=$((${EPOCHREALTIME/./} / 1000))
    "$XENSIM" crash "$d" >/dev/null || fail "xensim crash $d"
    wait_for 5 nf_recovering "$g"
    sleep 2
    state=$(in_g cat /sys/class/net/eth0/operstate)
    [ "$state" = up ] || fail "eth0 is $state during the recovery: the carrier went off"
    in_g ip neigh show dev eth0 | grep -q '^10.0.0.1 ' ||
        fail "10.0.0.1 left the neighbour table: $(in_g ip neigh show dev eth0)"
}

rewire_vif() {
    local g=$1 dev=$2 d=$3 fe gen
    fe=$(vif_fe "$g" "$dev")
    xenstore-write "$fe/backend" "$(vif_be "$d" "$g" "$dev")" "$fe/backend-id" "$d" ||
        fail "rewire: write $fe"
    xenstore-chmod -r "$fe" "n$g" "r$d" || fail "rewire: chmod $fe"
    gen=$(xenstore-read "$fe/shadow/generation" 2>/dev/null || echo 0)
    xenstore-write "$fe/shadow/generation" $((gen + 1)) || fail "rewire: bump generation"
}

net_sanitizer_check() {
    local f
    for f in "$TEST_TMP"/*.log; do
        if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$f" 2>/dev/null; then
            echo "FAIL: sanitizer report in $f:" >&2
            grep -B2 -A30 -E 'Sanitizer|runtime error' "$f" | head -60 >&2
            exit 1
        fi
    done
}

net_dump_logs() {
    local f
    for f in "$TEST_TMP"/*.log; do
        [ -f "$f" ] || continue
        echo "---- $(basename "$f") (last 30 lines)" >&2
        tail -n 30 "$f" | cut -c1-300 >&2
    done
}

# vif_be_add GUEST DRV DEVID [K=V...]: only the backend dir (a new driver domain's).
vif_be_add() {
    local g=$1 d=$2 dev=$3
    shift 3
    "$TPROG/dom0/xsdev" "$(vif_be "$d" "$g" "$dev")" "n$d,r$g" frontend="$(vif_fe "$g" "$dev")" \
        frontend-id="$g" online=1 state=1 handle="$dev" mac="$MAC" bridge=br0 type=vif \
        script=/etc/xen/scripts/vif-bridge "$@" || fail "vif_be_add: backend dir"
}

# replace_netback OLD NEW GUEST: the stand-in toolstack's recovery: destroy domain OLD
# if it is still there, start NEW with netback, its backend dir, rewire. Prints NEW's domid.
replace_netback() {
    local old=$1 new=$2 g=$3 d
    "$XENSIM" info "$old" >/dev/null 2>&1 && "$XENSIM" destroy "$old" >/dev/null
    d=$(netback_dom "$new") || fail "replace_netback: create $new"
    vif_be_add "$g" "$d" "$VIF" "${VIF_BE_KEYS[@]}"
    netback_go "$new" "$g" "$VIF"
    rewire_vif "$g" "$VIF" "$d"
    echo "$d"
}

NET_DOM_MTU=${NET_DOM_MTU:-1500}
_net_dom_n=0
_net_dom_nss=()
net_dom_ns() {
    local ns=$NS_D-$1 up
    _net_dom_n=$((_net_dom_n + 1))
    up=dl$_net_dom_n
    ip netns add "$ns" || fail "ip netns add $ns"
    [ ${#_net_dom_nss[@]} -gt 0 ] || on_exit "_net_dom_cleanup"
    _net_dom_nss+=("$ns")
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$ns" link add br0 type bridge && ip -n "$ns" link set br0 up &&
        ip -n "$ns" link add up0 mtu "$NET_DOM_MTU" type veth peer name "$up" mtu "$NET_DOM_MTU" &&
        ip -n "$ns" link set "$up" netns "$NS_D" && ip -n "$ns" link set up0 master br0 &&
        ip -n "$ns" link set up0 up && in_d ip link set "$up" master br0 &&
        in_d ip link set "$up" up || fail "net_dom_ns $1: network setup"
}
_net_dom_cleanup() {
    local ns
    for ns in "${_net_dom_nss[@]}"; do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
    return 0
}

netback_dom_ns() {
    local name=$1
    new_dom "$name" ip netns exec "$NS_D-$name" sh -c \
        'f=$1; shift; while [ ! -s "$f" ]; do sleep 0.02; done; exec "$@" --backend "$(cat "$f")"' \
        sh "$TEST_TMP/go.$name" "$NETBACK"
}

_vif_connected() { [ "$(xenstore-read "$1/state" 2>/dev/null)" = 4 ]; }
vif_standby() {
    local g=$1 name=$2 slot=$3 d fe sd be
    shift 3
    net_dom_ns "$name"
    d=$(netback_dom_ns "$name") || fail "vif_standby: create $name"
    fe=$(vif_fe "$g" "$VIF")
    sd=$fe/shadow/$slot
    be=$(vif_be "$d" "$g" "$VIF")
    xenstore-rm "$sd" 2>/dev/null || true
    "$TPROG/dom0/xsdev" "$sd" "n$g,r$d" backend="$be" backend-id="$d" state=1 handle="$VIF" \
        mac="$MAC" || fail "vif_standby: write $sd"
    "$TPROG/dom0/xsdev" "$be" "n$d,r$g" frontend="$sd" frontend-id="$g" online=1 state=1 \
        handle="$VIF" mac="$MAC" bridge=br0 type=vif script=/etc/xen/scripts/vif-bridge "$@" ||
        fail "vif_standby: write $be"
    netback_go "$name" "$g" "$VIF"
    xenstore-write "$fe/shadow/standby" "$slot" || fail "vif_standby: write $fe/shadow/standby"
    wait_for 10 _vif_connected "$sd"
    wait_for 10 _vif_connected "$be"
    SB=$d
}

vif_promote() {
    local old=$1 g=$2 d=$3 fe gen
    fe=$(vif_fe "$g" "$VIF")
    "$XENSIM" pause "$old" >/dev/null 2>&1 || true # fenced (or gone already)
    gen=$(xenstore-read "$fe/shadow/generation" 2>/dev/null || echo 0)
    # In this order (one call: no tool started between them): the generation last.
    [ -z "${VIF_STAMPS:-}" ] || date +%s%N >>"$VIF_STAMPS"
    xenstore-write "$fe/backend" "$(vif_be "$d" "$g" "$VIF")" "$fe/backend-id" "$d" \
        "$fe/shadow/generation" $((gen + 1)) || fail "vif_promote: write $fe"
    xenstore-rm "$fe/shadow/standby" || fail "vif_promote: remove $fe/shadow/standby"
    ("$XENSIM" destroy "$old" >/dev/null 2>&1 &)
}

vif_live_dir() {
    local fe be s
    fe=$(vif_fe "$1" "$VIF")
    be=$(xenstore-read "$fe/backend" 2>/dev/null)
    for s in slot-a slot-b; do
        if [ -n "$be" ] && [ "$(xenstore-read "$fe/shadow/$s/backend" 2>/dev/null)" = "$be" ]; then
            echo "$fe/shadow/$s"
            return
        fi
    done
    echo "$fe"
}
