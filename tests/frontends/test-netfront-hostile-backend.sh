#!/usr/bin/env bash
# A hostile backend (nethostile: well-formed traffic mixed with every kind of
# nonsense in the shared rings and the store, seeded) runs against the ASan-built
# shadow netfront for a bounded time, with traffic both ways. The frontend never
# crashes or hangs: it reports each violation, reconnects, its interface stays,
# and it stops cleanly afterwards with no sanitizer report.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/net-functions.sh"
requires xenstore-read
HOSTILE=$TPROG/frontends/nethostile
[ -x "$HOSTILE" ] || fail "no $HOSTILE"
SECONDS_RUN=${NET_HOSTILE_SECONDS:-15}
start_sim
on_exit '[ "$rc" -eq 0 ] || net_dump_logs'
net_ns
for seed in 1 2; do
    g=$(netfront_dom "guest$seed" --deadline-ms 300)
    d=$(new_dom "hostile$seed" sh -c 'while [ ! -s "$1" ]; do sleep 0.02; done; exec "$2" --backend "$(cat "$1")" --seconds "$3" --seed "$4"' \
        sh "$TEST_TMP/go.hostile$seed" "$HOSTILE" "$SECONDS_RUN" "$seed")
    vif_add "$g" "$d" $VIF
    vif_be "$d" "$g" $VIF >"$TEST_TMP/go.hostile$seed"
    touch "$TEST_TMP/go.guest$seed"
    guest_ip
    # Traffic from the guest (tx to answer, and an address to resolve).
    in_g bash -c 'for i in $(seq 1 2000); do echo x >/dev/udp/10.0.0.1/9; sleep 0.005; done' 2>/dev/null &
    tpid=$!
    "$XENSIM" wait "hostile$seed" --until shutdown --timeout $((SECONDS_RUN + 30)) >/dev/null ||
        fail "the hostile backend did not finish"
    kill $tpid 2>/dev/null
    wait $tpid 2>/dev/null
    grep -q HOSTILE-DONE "$TEST_TMP/hostile$seed.log" || fail "hostile backend: $(tail -3 "$TEST_TMP/hostile$seed.log")"
    log "seed $seed: $(grep HOSTILE-DONE "$TEST_TMP/hostile$seed.log"); $(grep -c HOSTILE-CONNECT "$TEST_TMP/hostile$seed.log") connections"
    "$XENSIM" info "guest$seed" | grep -q state=running || fail "the frontend died: $(tail -5 "$TEST_TMP/guest$seed.log")"
    in_g ip link show eth0 >/dev/null || fail "eth0 is gone"
    seq=$(nf_key "$g" shadow/report | cut -d' ' -f1)
    [ "${seq:-0}" -ge 3 ] || fail "only ${seq:-0} faults reported"
    log "seed $seed: $seq faults reported, last '$(nf_key "$g" shadow/report)'; kinds: $(grep -o 'failed: [a-z-]*' "$TEST_TMP/guest$seed.log" | sort | uniq -c | tr -s ' \n' ' ')"
    # It still answers a signal at once: no hang.
    "$XENSIM" destroy "guest$seed" >/dev/null
    net_sanitizer_check
    in_g ip link show eth0 >/dev/null 2>&1 && wait_for 5 sh -c "! ip netns exec $NS_G ip link show eth0"
done
exit 0
