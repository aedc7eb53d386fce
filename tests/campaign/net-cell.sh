#!/usr/bin/env bash
# net-cell.sh - one network row of the application table in one column, on
# xensim (run by run-campaign; README.md there has the rules).
#
# Setup, as in tests/sim/test-net-shadowd-recovery.sh: network namespaces
# stand for the machines (tests/frontends/net-functions.sh); shadowd keeps a
# driver domain "drv" running understudy-agent, which starts netback in $NS_D
# (bridge br0, with a veth to the server's namespace $NS_S, 10.0.0.1); the
# guest runs understudy-netfront, whose TAP eth0 (10.0.0.2) is in $NS_G. All
# traffic stays in these namespaces. Rows:
#   transfer  for SECS s, transfer after transfer: a file of random data
#             (256 MiB; 32 MiB when SECS <= 10, the quick mode) served by
#             busybox httpd on the server, downloaded by curl in the guest;
#             each received file's sha256 must be the source's, and no
#             transfer may go STALL_S s without a byte (sampled every 0.25 s)
#   session   a remote interactive session over ssh (OpenSSH's sshd on the
#             server, in a mount namespace of its own with an empty /root, so
#             that no login dotfile of this machine runs): net-session.sh's
#             message every 20 ms, each echoed by `cat` at the other end of
#             one ssh session, for SECS s, none lost, garbled or answered
#             later than LATE_MS; and while it runs a new ssh connection
#             every 0.5 s (one at a time), each of which must succeed (it may
#             wait for a recovery: up to 30 s to connect) and run its command
#   analyzer  tcpdump in promiscuous mode on eth0 captures what another host
#             sends a third: numbered datagrams every 20 ms from the server to
#             10.0.0.3 (a namespace of its own on br0; the bridge in hub mode,
#             ageing 0, so that it floods every frame to every port, as a
#             mirror port would); after the run every datagram sent must be in
#             the capture once, but for gaps that lie inside a fault's window
#             (from 0.5 s before the fault to 1 s after its recovery; to 2 s
#             after a slow spell): capture must resume after every recovery.
#             The guest itself sends nothing: the netfront sees a hung
#             backend by its liveness probe of the idle tx path
# Columns: shadow (the netfront as shipped), restart (--shadow off: the
# netfront as a plain one that reconnects to the restarted backend - no
# receive filter, nothing held or replayed: a frame the dead backend never
# answered, or sent while there is none, is lost), none (shadowd stops once
# the domain is up).
# Verdicts (README.md): CRASH - the program failed or had to be killed (curl
# failed, the ssh session disconnected, tcpdump died); MALFUNCTION - it ran
# but what arrived is wrong (a checksum, a message lost or garbled, a new
# connection that failed, a frame captured twice or missing outside every
# fault's window) or it stalled (a transfer STALL_S s without a byte, an echo
# later than LATE_MS); SUCCESS otherwise.
# usage: net-cell.sh ROW COLUMN   (environment: campaign-lib.sh)
ROW=$1 COLUMN=$2
. "$(dirname "$0")/../functions.sh"
. "$(dirname "$0")/../frontends/net-functions.sh"
. "$(dirname "$0")/campaign-lib.sh"
requires jq xenstore-read busybox socat curl tcpdump sha256sum bc
# A transfer may go this long without a byte: TCP's retransmission after a
# recovery (its backoff doubles while the link is down) with faults 0.9 s
# apart, not a frontend that no longer delivers.
STALL_S=${STALL_S:-10}
# The latest an echo of the session may come: the frontend's deadline (1 s),
# the restart and reconnect (a second or two), and a TCP retransmission of
# what was lost while there was no backend (0.2 s, doubling while the link
# is down); an interactive session that freezes for longer is broken.
LATE_MS=${LATE_MS:-5000}
FE_MODE=()
case $COLUMN in
shadow | none) ;;
restart) FE_MODE=(--shadow off) ;;
*) fail "unknown column $COLUMN" ;;
esac
case $ROW in
transfer | analyzer) ;;
session) requires sshd ssh ssh-keygen ;;
*) fail "unknown network row $ROW" ;;
esac
[ -x "$NETBACK" ] && [ -x "$NETFRONT" ] && [ -x "$AGENT" ] || skip "the network class or the agent is not built"

start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
# Every report of the guest's may restart the domain (the default budget, 3
# report-triggered recoveries per guest per 10 minutes, is a guard against a
# hostile guest; the campaign's faults would use it up), as disk-functions.sh.
sd_conf "report-budget 1000" "report-window 10m"
net_sd_domain "heartbeat-timeout 1s" "restart-budget 64" "restart-window $SD_RESTART_WINDOW" \
    "reconnect-timeout 20s"
sd_start
# What the guest's interface moved, both ways (the plot's series: cmp_series).
cmp_counter() {
    ip netns exec "$NS_G" cat /sys/class/net/eth0/statistics/rx_bytes /sys/class/net/eth0/statistics/tx_bytes |
        awk '{ n += $1 } END { print n }'
}
d=$(sd_wait_up drv)
net_sd_guest "$d" "${FE_MODE[@]}"
CMP_FE=$(vif_fe "$g" $VIF)
wait_for 10 in_g busybox ping -c 1 -W 1 10.0.0.1

# The verdict.
verdict() {
    cmp_cell "$1" "$2"
    exit 0
}
# gaps_ok < "FROM TO" lines (ms after the program started): every gap lies
# inside one fault's window; else prints the first that does not.
gaps_ok() {
    awk -v win="$(cmp_windows | tr '\n' ' ')" '
        BEGIN { n = split(win, w, " ") }
        { ok = 0
          for (i = 1; i < n; i += 2) if ($1 >= w[i] && $2 <= w[i + 1]) ok = 1
          if (!ok) { printf "frames sent from %.1f s to %.1f s missing from the capture, not inside a fault'"'"'s window\n", $1 / 1000, $2 / 1000; bad = 1; exit 1 } }
        END { exit bad }'
}
# Faults come every 0.9-2.4 s while the program runs (after a second).
GAP_MIN=0.9 GAP_SPAN=15

case $ROW in
transfer)
    MIB=${NET_MIB:-$([ "$SECS" -le 10 ] && echo 32 || echo 256)}
    mkdir -p "$TEST_TMP/www"
    head -c "${MIB}M" /dev/urandom >"$TEST_TMP/www/blob" || fail "the source file"
    want=$(sha256sum <"$TEST_TMP/www/blob" | cut -d' ' -f1)
    in_s timeout $((SECS * 3 + 900)) busybox httpd -f -p 10.0.0.1:8080 -h "$TEST_TMP/www" &
    on_exit "kill $! 2>/dev/null"
    wait_for 10 in_g curl -s -o /dev/null http://10.0.0.1:8080/
    # One transfer with no fault: what a transfer takes (the reason says it).
    s=$(cmp_now_ms)
    in_g curl -sS --max-time 300 -o "$TEST_TMP/got" http://10.0.0.1:8080/blob || fail "the fault-free transfer"
    base_ms=$(($(cmp_now_ms) - s))
    [ "$(sha256sum <"$TEST_TMP/got" | cut -d' ' -f1)" = "$want" ] || fail "the fault-free transfer's sha256"
    rm -f "$TEST_TMP/got"
    log "a fault-free transfer of $MIB MiB: $base_ms ms"
    [ "$COLUMN" = none ] && sd_stop
    # The program: transfers for SECS s (at least one), each received file's
    # size sampled every 0.25 s while curl runs: each time without a byte
    # for over a second goes to stalls.txt ("K FROM TO" ms after the start),
    # each transfer to xfers.txt ("K RC MS SHA256"). The file is hashed (and
    # removed) while the next transfer runs, so that the link is never idle.
    prog() {
        local k t0 s e c rc last lt now sz h=
        t0=$(cmp_now_ms)
        for ((k = 0; k < 100000; k++)); do
            s=$(cmp_now_ms)
            ip netns exec "$NS_G" curl -sS -o "$TEST_TMP/got.$k" http://10.0.0.1:8080/blob 2>>"$TEST_TMP/prog.err" &
            c=$!
            last=-1 lt=$s
            while kill -0 $c 2>/dev/null; do
                sz=$(stat -c %s "$TEST_TMP/got.$k" 2>/dev/null || echo 0)
                now=$(cmp_now_ms)
                if [ "$sz" != "$last" ]; then
                    [ $((now - lt)) -le 1000 ] || echo "$k $((lt - PROG_T0)) $((now - PROG_T0))" >>"$TEST_TMP/stalls.txt"
                    last=$sz lt=$now
                fi
                sleep 0.25
            done
            rc=0
            wait $c || rc=$?
            e=$(cmp_now_ms)
            [ $((e - lt)) -le 1000 ] || echo "$k $((lt - PROG_T0)) $((e - PROG_T0))" >>"$TEST_TMP/stalls.txt"
            [ -z "$h" ] || wait "$h"
            (
                echo "$k $rc $((e - s)) $(sha256sum <"$TEST_TMP/got.$k" 2>/dev/null | cut -d' ' -f1)" >>"$TEST_TMP/xfers.txt"
                rm -f "$TEST_TMP/got.$k"
            ) &
            h=$!
            [ $rc = 0 ] && [ $((e - t0)) -lt $((SECS * 1000)) ] || break
        done
        wait "$h"
        return $rc
    }
    : >"$TEST_TMP/xfers.txt"
    : >"$TEST_TMP/stalls.txt"
    PROG_T0=$(cmp_now_ms)
    set -m
    prog &
    pid=$!
    set +m
    sleep 1
    cmp_faults $pid $GAP_MIN $GAP_SPAN
    rc=0
    cmp_run_timed $pid "$((SECS + base_ms / 1000 + 1))" || rc=$?
    sed 's/^/transfer /' "$TEST_TMP/xfers.txt"
    sed 's/^/no-progress /' "$TEST_TMP/stalls.txt"
    n=$(wc -l <"$TEST_TMP/xfers.txt")
    [ $rc != 124 ] || verdict CRASH "transfer $n: curl had to be killed (the program still running at 1.5 x $((SECS + base_ms / 1000 + 1)) s + 10 s), $(stat -c %s "$TEST_TMP/got.$n" 2>/dev/null || echo 0) of $((MIB << 20)) bytes received"
    [ $rc = 0 ] || verdict CRASH "transfer $((n - 1)): curl exited $rc: $(tail -c 300 "$TEST_TMP/prog.err")"
    while read -r k _ ms sum; do
        [ "$sum" = "$want" ] || verdict MALFUNCTION "transfer $k: the received file's sha256 is not the source's ($ms ms)"
    done <"$TEST_TMP/xfers.txt"
    stall=$(awk -v lim=$((STALL_S * 1000)) '$3 - $2 > lim { printf "transfer %d: no byte from %.1f s to %.1f s", $1, $2 / 1000, $3 / 1000; exit }' "$TEST_TMP/stalls.txt")
    [ -z "$stall" ] || verdict MALFUNCTION "a stall: $stall"
    longest=$(awk '{ if ($3 - $2 > m) m = $3 - $2 } END { print m ? m " ms" : "under a second" }' "$TEST_TMP/stalls.txt")
    verdict SUCCESS "$n transfers of $MIB MiB, every sha256 the source's; $(sort -k3 -n "$TEST_TMP/xfers.txt" | awk '{ t[NR] = $3 } END { printf "each took %.1f-%.1f s, median %.1f s", t[1] / 1000, t[NR] / 1000, t[int((NR + 1) / 2)] / 1000 }') (fault-free $(printf %d.%d $((base_ms / 1000)) $((base_ms % 1000 / 100))) s); the longest time without a byte $longest"
    ;;
session)
    # sshd on the server: its own keys and config in TEST_TMP, root's home an
    # empty tmpfs in its own mount namespace.
    ssh-keygen -q -t ed25519 -N '' -f "$TEST_TMP/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$TEST_TMP/user_key" ||
        fail "ssh-keygen"
    cp "$TEST_TMP/user_key.pub" "$TEST_TMP/authorized_keys"
    cat >"$TEST_TMP/sshd_config" <<EOF
ListenAddress 10.0.0.1:2222
HostKey $TEST_TMP/host_key
AuthorizedKeysFile $TEST_TMP/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PrintMotd no
PrintLastLog no
X11Forwarding no
PidFile $TEST_TMP/sshd.pid
MaxStartups 100
EOF
    mkdir -p /run/sshd # its privilege separation directory
    in_s unshare --mount --propagation private sh -c 'mount -t tmpfs -o mode=0700 none /root && exec timeout "$1" "$(command -v sshd)" -f "$2" -D -e' \
        sh $((SECS * 3 + 900)) "$TEST_TMP/sshd_config" 2>"$TEST_TMP/sshd.out" &
    on_exit "kill $! 2>/dev/null"
    cat >"$TEST_TMP/ssh-to" <<EOF
#!/bin/sh
exec ssh -F /dev/null -i $TEST_TMP/user_key -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no \
    -o BatchMode=yes -o LogLevel=ERROR -o ConnectTimeout=30 -p 2222 root@10.0.0.1 "\$@"
EOF
    chmod +x "$TEST_TMP/ssh-to"
    wait_for 15 in_g "$TEST_TMP/ssh-to" true
    [ "$COLUMN" = none ] && sd_stop
    # The session: net-session.sh's messages to a relay on the guest's
    # loopback, which gives them to one ssh session running cat on the
    # server (ssh's own complaints in ssh.err).
    in_g socat TCP-LISTEN:7100,bind=127.0.0.1,reuseaddr EXEC:"$TEST_TMP/ssh-to cat" 2>"$TEST_TMP/ssh.err" &
    on_exit "kill $! 2>/dev/null"
    _relay_up() { in_g ss -Hltn 'sport = 7100' | grep -q .; }
    wait_for 10 _relay_up
    # New connections: one at a time, every 0.5 s for SECS s (bounded), each
    # an ssh that runs a command: "K RC MS" to conns.txt.
    conns() {
        local k s e rc out
        for ((k = 0; k < SECS * 2 + 1; k++)); do
            [ -e "$TEST_TMP/stop.conns" ] && break
            s=$(cmp_now_ms)
            out=$(timeout 40 ip netns exec "$NS_G" "$TEST_TMP/ssh-to" echo "conn-$k" 2>>"$TEST_TMP/conns.err") && rc=0 || rc=$?
            e=$(cmp_now_ms)
            [ $rc != 0 ] || [ "$out" = "conn-$k" ] || rc=garbled
            echo "$k $rc $((e - s))" >>"$TEST_TMP/conns.txt"
            [ $((e - s)) -ge 500 ] || sleep "0.$(printf %03d $((500 - (e - s))))"
        done
    }
    : >"$TEST_TMP/conns.txt"
    PROG_T0=$(cmp_now_ms)
    ip netns exec "$NS_G" "$TOP/tests/frontends/net-session.sh" 127.0.0.1 7100 \
        "$TEST_TMP/stop.session" "$TEST_TMP/session.out" &
    spid=$!
    on_exit "touch $TEST_TMP/stop.session"
    conns &
    cpid=$!
    on_exit "touch $TEST_TMP/stop.conns"
    # The program's time: SECS s of session; faults while it runs.
    sleep "$SECS" &
    tpid=$!
    sleep 1
    cmp_faults $tpid $GAP_MIN $GAP_SPAN
    wait $tpid
    touch "$TEST_TMP/stop.session" "$TEST_TMP/stop.conns"
    rc=0
    cmp_run_timed $spid 20 || rc=$?
    cmp_run_timed $cpid 30 || verdict CRASH "the new connections' loop had to be killed"
    cat "$TEST_TMP/session.out"
    sed 's/^/conn /' "$TEST_TMP/conns.txt"
    last=$(tail -n 1 "$TEST_TMP/session.out")
    if [ $rc != 0 ] || ! grep -q '^SESSION-OK' <<<"$last"; then
        case $last in
        *answered*) verdict MALFUNCTION "a message garbled: $last" ;;
        *"no answer"*)
            # No answer in 30 s: a disconnect if ssh said why, else lost.
            [ -s "$TEST_TMP/ssh.err" ] && verdict CRASH "the session disconnected: $last; ssh: $(tail -c 200 "$TEST_TMP/ssh.err")"
            verdict MALFUNCTION "a message lost (no answer in 30 s; ssh reported no disconnect): $last"
            ;;
        *) verdict CRASH "the session disconnected: ${last:-no output}$([ $rc = 124 ] && echo " (killed)"); ssh: $(tail -c 200 "$TEST_TMP/ssh.err")" ;;
        esac
    fi
    msgs=$(awk '{print $2}' <<<"$last")
    max=$(sed -n 's/.*max_ms=//p' <<<"$last")
    [ "$max" -le "$LATE_MS" ] || verdict MALFUNCTION "an echo $max ms late (the bound: $LATE_MS ms)"
    nconn=$(wc -l <"$TEST_TMP/conns.txt")
    badc=$(awk '$2 != 0 { printf "connection %d (of %d): %s after %d ms", $1, n, $2 == "garbled" ? "wrong output" : "exit " $2, $3; exit }' n="$nconn" "$TEST_TMP/conns.txt")
    [ -z "$badc" ] || verdict MALFUNCTION "a new connection failed: $badc: $(tail -c 200 "$TEST_TMP/conns.err")"
    [ "$nconn" -gt 0 ] || verdict CRASH "no new connection was made"
    slowc=$(sort -k3 -n "$TEST_TMP/conns.txt" | tail -n 1 | awk '{print $3}')
    verdict SUCCESS "$msgs messages, each echoed, the slowest in $max ms; $nconn new connections, all made, the slowest in $slowc ms"
    ;;
analyzer)
    # Another host, 10.0.0.3 (MAC 02:00:00:00:00:03), on br0; the bridge a
    # hub (it learns nothing: every frame goes to every port).
    NS_B=nfb$$
    ip netns add "$NS_B" || fail "ip netns add"
    on_exit "ip netns pids $NS_B 2>/dev/null | xargs -r kill -KILL 2>/dev/null; ip netns del $NS_B 2>/dev/null"
    in_b() { ip netns exec "$NS_B" "$@"; }
    in_d ip link add vdb type veth peer name vb0 && in_d ip link set vb0 netns "$NS_B" &&
        in_d ip link set vdb master br0 && in_d ip link set vdb up &&
        in_b ip link set vb0 address 02:00:00:00:00:03 && in_b ip addr add 10.0.0.3/24 dev vb0 &&
        in_b ip link set vb0 up && in_b ip link set lo up &&
        in_b sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 &&
        in_d ip link set br0 type bridge ageing_time 0 || fail "the other host"
    # It receives (so it answers nothing: no port unreachable).
    in_b timeout $((SECS * 3 + 900)) socat -u UDP-RECV:9999 /dev/null &
    on_exit "kill $! 2>/dev/null"
    # The talker: a numbered datagram to it every 20 ms ("UNDSTSEQ N."),
    # each "N MS" (when sent) to sent.txt, until stop.talk (bounded).
    talk() {
        local n t
        exec 3>/dev/udp/10.0.0.3/9999 || return 1
        for ((n = 1; n <= (SECS + 60) * 50; n++)); do
            [ -e "$TEST_TMP/stop.talk" ] && break
            t=${EPOCHREALTIME/./}
            echo "UNDSTSEQ $n." >&3
            echo "$n $((t / 1000))" >>"$TEST_TMP/sent.txt"
            sleep 0.02
        done
    }
    : >"$TEST_TMP/sent.txt"
    in_s bash -c "$(declare -f talk); TEST_TMP=$TEST_TMP SECS=$SECS; talk" 2>"$TEST_TMP/talk.err" &
    tkpid=$!
    on_exit "touch $TEST_TMP/stop.talk"
    [ "$COLUMN" = none ] && sd_stop
    # The program: tcpdump, promiscuous (no -p), every frame for the other
    # host's MAC with the talker's port, to a file as it comes.
    ip netns exec "$NS_G" tcpdump -i eth0 -n -U --immediate-mode -B 4096 -w "$TEST_TMP/cap.pcap" \
        udp dst port 9999 and ether dst 02:00:00:00:00:03 2>"$TEST_TMP/tcpdump.err" &
    tpid=$!
    on_exit "kill $tpid 2>/dev/null"
    _captured() { [ "$(stat -c %s "$TEST_TMP/cap.pcap" 2>/dev/null || echo 0)" -gt 100 ]; }
    wait_for 10 _captured
    [ $(($(in_g cat /sys/class/net/eth0/flags) & 0x100)) -ne 0 ] || fail "tcpdump did not make eth0 promiscuous"
    PROG_T0=$(cmp_now_ms)
    sleep "$SECS" &
    spid=$!
    sleep 1
    cmp_faults $spid $GAP_MIN $GAP_SPAN
    wait $spid
    # Three seconds more: capture must be seen to resume after the last fault.
    sleep 3
    touch "$TEST_TMP/stop.talk"
    wait $tkpid
    sleep 1 # what is on its way to the capture
    kill -0 $tpid 2>/dev/null || { wait $tpid; verdict CRASH "tcpdump exited $? during the run: $(tail -c 300 "$TEST_TMP/tcpdump.err")"; }
    kill -TERM $tpid
    rc=0
    cmp_run_timed $tpid 5 || rc=$?
    [ $rc = 0 ] || verdict CRASH "tcpdump exited $rc: $(tail -c 300 "$TEST_TMP/tcpdump.err")"
    grep -E 'packets (captured|received|dropped)' "$TEST_TMP/tcpdump.err"
    tcpdump -r "$TEST_TMP/cap.pcap" -n -A 2>/dev/null | grep -o 'UNDSTSEQ [0-9]*\.' | tr -d . | awk '{print $2}' >"$TEST_TMP/got.txt"
    # Judged from the program's start to the talker's end.
    awk -v s="$PROG_T0" '$2 >= s' "$TEST_TMP/sent.txt" >"$TEST_TMP/judged.txt"
    nsent=$(wc -l <"$TEST_TMP/judged.txt")
    [ "$nsent" -gt 0 ] || fail "the talker sent nothing"
    dup=$(sort -n "$TEST_TMP/got.txt" | uniq -d | head -n 1)
    [ -z "$dup" ] || verdict MALFUNCTION "datagram $dup captured twice (sent once)"
    # The gaps: runs of datagrams sent but not captured, "FROM TO" ms.
    awk -v s="$PROG_T0" 'NR == FNR { got[$1] = 1; next }
        !($1 in got) { if (!in_gap) { a = $2 - s; in_gap = 1; m = 0 } b = $2 - s; m++; next }
        in_gap { print a, b, m; in_gap = 0 }
        END { if (in_gap) print a, b, m }' "$TEST_TMP/got.txt" "$TEST_TMP/judged.txt" >"$TEST_TMP/gaps.txt"
    sed 's/^/gap /' "$TEST_TMP/gaps.txt"
    # Capture must resume after every fault: a gap may not run to the end
    # (the talker stops 3 s after the last fault's window at the earliest).
    endgap=$(tail -n 1 "$TEST_TMP/judged.txt" | awk 'NR == FNR { got[$1] = 1; next } !($1 in got) { print "x" }' "$TEST_TMP/got.txt" -)
    if [ -n "$endgap" ]; then
        from=$(tail -n 1 "$TEST_TMP/gaps.txt" | awk '{print $1}')
        before=$(jq -r --arg row "$ROW" --arg col "$COLUMN" --argjson s "$PROG_T0" --argjson f "$from" \
            'select(.row == $row and .column == $col and .t_ms - $s <= $f + 500) | "\(.fault) at \((.t_ms - $s) / 1000) s: \(.result)"' \
            "$CAMPAIGN_OUT/trials.jsonl" | tail -n 1)
        verdict MALFUNCTION "capture never resumed: nothing from $(printf %d.%d $((from / 1000)) $((from % 1000 / 100))) s on (the fault before: ${before:-none})"
    fi
    why=$(gaps_ok <"$TEST_TMP/gaps.txt") || verdict MALFUNCTION "$why"
    missing=$(awk '{ s += $3 } END { print s + 0 }' "$TEST_TMP/gaps.txt")
    longest=$(awk '{ if ($2 - $1 > m) m = $2 - $1 } END { print m + 0 }' "$TEST_TMP/gaps.txt")
    verdict SUCCESS "$((nsent - missing)) of $nsent datagrams for another host captured; $(wc -l <"$TEST_TMP/gaps.txt") gaps ($missing datagrams), the longest $longest ms, each inside a fault's window"
    ;;
esac
