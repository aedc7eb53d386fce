# tests/backends/vif-functions.sh - virtual network interfaces on xensim, set
# up as libxl sets them up, with the driver domain's network side in network
# namespaces of this machine. Source after tests/functions.sh.
#
#   vif_net                   namespaces $NS_D (the driver domain: bridge br0, veth vd0 on
#                             it) and $NS_S (a server: veth vs0, $PEER_IP, MAC $PEER_MAC, a
#                             static neighbour entry for the guest); removed on exit
#   in_d / in_s CMD...        run CMD in that namespace
#   vif_fe GUEST DEVID / vif_be DRV GUEST DEVID   the two dirs
#   vif_add GUEST DRV DEVID [KEY=VALUE...]        frontend and backend dirs (more backend keys)
#   netback_start DRV GUEST DEVID [ARGS...]       netback in DRV and $NS_D, in the background;
#                                                 sets NB_PID, NB_LOG
#   netback_alive / netback_wait_exit SECONDS     (sets NB_RC)
#   netfront GUEST DEVID [OPTIONS] CMD...         the test frontend in GUEST, in the foreground
#   netfront_bg OUT GUEST DEVID [OPTIONS] CMD...  the same in the background; sets FRONT_PID
#   peer CMD...                                   npeer in $NS_S (see npeer.c)
#   peer_bg OUT CMD...                            the same in the background; sets PEER_PID
#   wait_line FILE REGEX SECONDS                  wait for a line in FILE
#   inject DRV FAULT [COUNT]                      a fault request, new seq each time
#   vif_state DRV GUEST DEVID / vif_state_is DRV GUEST DEVID STATE
#   vif_setup [KEY=VALUE...] [-- NETBACK-ARGS]    all of it for one vif: sim, network, domains
#                                                 drv and guest, device $DEV, netback in InitWait

NETBACK=$BUILD/bin/netback
NETFRONT=$TPROG/backends/netfront
NPEER=$TPROG/backends/npeer
GUEST_MAC=00:16:3e:12:34:56
GUEST_IP=10.99.0.2
PEER_MAC=02:00:00:99:00:01
PEER_IP=10.99.0.1
DEV=0
_inject_seq=0

vif_net() {
    requires ip
    [ "$(id -u)" -eq 0 ] || skip "needs root for network namespaces"
    NS_D=nbd$$ NS_S=nbs$$
    ip netns add "$NS_D" && ip netns add "$NS_S" || skip "cannot create network namespaces"
    on_exit "ip netns del $NS_D 2>/dev/null; ip netns del $NS_S 2>/dev/null"
    # No IPv6 chatter (DAD, router solicitations) in what the guest receives.
    in_d sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    in_s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    # mcast_snooping 0: the bridge floods all multicast and sends no IGMP reports of its own.
    in_d ip link set lo up && in_d ip link add br0 type bridge mcast_snooping 0 &&
        in_d ip link set br0 up && in_d ip link add vd0 type veth peer name vs0 &&
        in_d ip link set vs0 netns "$NS_S" && in_d ip link set vd0 master br0 &&
        in_d ip link set vd0 up && in_s ip link set lo up &&
        in_s ip link set vs0 address "$PEER_MAC" && in_s ip addr add "$PEER_IP/24" dev vs0 &&
        in_s ip link set vs0 up &&
        in_s ip neigh replace "$GUEST_IP" lladdr "$GUEST_MAC" dev vs0 nud permanent ||
        fail "network setup"
}
in_d() { ip netns exec "$NS_D" "$@"; }
in_s() { ip netns exec "$NS_S" "$@"; }

vif_fe() { echo "/local/domain/$1/device/vif/$2"; }
vif_be() { echo "/local/domain/$1/backend/vif/$2/$3"; }

# As libxl: the whole dir, with its permissions, in one transaction (xsdev).
vif_add() {
    local g=$1 d=$2 dev=$3
    shift 3
    local xsdev=$TPROG/dom0/xsdev
    [ -x "$xsdev" ] || fail "no $xsdev"
    "$xsdev" "$(vif_fe "$g" "$dev")" "n$g,r$d" backend="$(vif_be "$d" "$g" "$dev")" \
        backend-id="$d" state=1 handle="$dev" mac="$GUEST_MAC" || fail "vif_add: frontend dir"
    "$xsdev" "$(vif_be "$d" "$g" "$dev")" "n$d,r$g" frontend="$(vif_fe "$g" "$dev")" \
        frontend-id="$g" online=1 state=1 handle="$dev" mac="$GUEST_MAC" bridge=br0 type=vif \
        script=/etc/xen/scripts/vif-bridge "$@" || fail "vif_add: backend dir"
}

netback_start() {
    local d=$1 g=$2 dev=$3
    shift 3
    NB_LOG=$TEST_TMP/netback-$dev.log
    # $! must be netback itself: xensim exec and ip netns exec both exec.
    "$XENSIM" exec "$d" -- ip netns exec "$NS_D" "$NETBACK" --backend "$(vif_be "$d" "$g" "$dev")" \
        "$@" >>"$NB_LOG" 2>&1 &
    NB_PID=$!
    on_exit "kill -KILL $NB_PID 2>/dev/null; _netback_log_check $NB_LOG"
}

netback_alive() { kill -0 "$NB_PID" 2>/dev/null; }

netback_wait_exit() {
    local i
    for ((i = 0; i < $1 * 20; i++)); do netback_alive || break; sleep 0.05; done
    netback_alive && fail "netback $NB_PID still running after $1 s"
    wait "$NB_PID"
    NB_RC=$?
}

# A sanitizer report in a log fails the test.
_netback_log_check() {
    if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$1" 2>/dev/null; then
        echo "FAIL: sanitizer report in $1:" >&2
        grep -A30 -E 'Sanitizer|runtime error' "$1" | head -60 >&2
        exit 1
    fi
}

# _netfront_cmd GUEST DEVID [OPTIONS] CMD...: the command line, in NF_CMD.
_netfront_cmd() {
    local g=$1 dev=$2
    shift 2
    local opts=(--peer-mac "$PEER_MAC" --peer-ip "$PEER_IP" --ip "$GUEST_IP")
    while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do
        opts+=("$1")
        case $1 in --queues | --rx-bufs | --timeout | --ip | --peer-ip | --peer-mac | --src-mac) opts+=("$2"); shift ;; esac
        shift
    done
    NF_CMD=("$XENSIM" exec "$g" -- "$NETFRONT" "${opts[@]}" "$(vif_fe "$g" "$dev")" "$@")
}
netfront() {
    _netfront_cmd "$@"
    "${NF_CMD[@]}"
}
netfront_bg() {
    local out=$1
    shift
    _netfront_cmd "$@"
    # Emptied here, not by the background job's redirection: a caller's
    # wait_line must not read what an earlier frontend left in out
    # (test-netback-reconnect killed its second frontend before it connected).
    : >"$out"
    "${NF_CMD[@]}" >>"$out" 2>&1 &
    FRONT_PID=$!
    on_exit "kill -KILL $FRONT_PID 2>/dev/null"
}

peer() { in_s "$NPEER" "$@"; }
peer_bg() {
    local out=$1
    shift
    in_s "$NPEER" "$@" >"$out" 2>&1 &
    PEER_PID=$!
    on_exit "kill -KILL $PEER_PID 2>/dev/null"
}

wait_line() {
    local f=$1 re=$2 to=$3 i
    for ((i = 0; i < to * 20; i++)); do grep -qE "$re" "$f" 2>/dev/null && return 0; sleep 0.05; done
    fail "timed out after ${to}s waiting for /$re/ in $f: $(tail -3 "$f" 2>/dev/null)"
}

inject() {
    local d=$1
    shift
    _inject_seq=$((_inject_seq + 1))
    local k=/local/domain/$d/data/understudy/inject
    xenstore-write "$k" "$_inject_seq $*" && xenstore-chmod "$k" n0 "r$d" ||
        fail "inject: writing $k"
}

vif_state() { xenstore-read "$(vif_be "$1" "$2" "$3")/state" 2>/dev/null; }
vif_state_is() { [ "$(vif_state "$1" "$2" "$3")" = "$4" ]; }

vif_setup() {
    local keys=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do keys+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    vif_net
    start_sim
    drv=$(new_dom drv)
    guest=$(new_dom guest)
    vif_add "$guest" "$drv" "$DEV" "${keys[@]}"
    netback_start "$drv" "$guest" "$DEV" "$@"
    wait_for 10 vif_state_is "$drv" "$guest" "$DEV" 2
}
