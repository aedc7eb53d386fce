#!/usr/bin/env bash
# Multiple queues (multi-queue-num-queues, queue-N/ keys), with shared and
# with split event channels: frames sent on every queue arrive; frames from
# many flows towards the guest arrive on more than one queue (the TAP's
# queues, one per netif queue); every byte checked.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vif-functions.sh"
vif_setup
for split in "" --split; do
    pout=$TEST_TMP/peer.out
    peer_bg "$pout" recv-udp 7000 80 30
    wait_line "$pout" '^# listening' 10
    out=$TEST_TMP/front.out
    rm -f "$TEST_TMP/go"
    # shellcheck disable=SC2086
    netfront_bg "$out" "$guest" $DEV --queues 4 $split connect udp 7000 700 80 2 \
        wait-file "$TEST_TMP/go" expect-udp 7001 200 close
    wait $PEER_PID || fail "peer: $(cat "$pout"; cat "$out")"
    cat "$pout"
    peer send-udp "$GUEST_IP" 7001 500 200 || fail "peer send-udp"
    touch "$TEST_TMP/go"
    wait $FRONT_PID || fail "frontend $split: $(cat "$out")"
    cat "$out"
    grep -qE 'ok: received 200 UDP frames .* on [2-4] queue' "$out" || fail "rx used one queue only"
    mode=shared
    [ -n "$split" ] && mode=split
    grep -q "4 queue(s), $mode event channels" "$NB_LOG" ||
        fail "netback did not connect 4 queues ($split)"
done
netback_alive || fail "netback exited"
exit 0
