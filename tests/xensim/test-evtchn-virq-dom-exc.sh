#!/usr/bin/env bash
# VIRQ_DOM_EXC: dom0 can bind it once (EEXIST again), and it fires when a
# domain is destroyed and when one shuts down (crash).
source "$(dirname "$0")/hyp-functions.sh"
start_sim
a=$(new_dom a)
b=$(new_dom b)
out=$TEST_TMP/virq.out
"$EVT_CHECK" virq-wait 2 >"$out" 2>&1 &
checker=$!
wait_for 20 has "$out" '^READY'
sleep 0.3
has "$out" '^DOM_EXC' && fail "VIRQ_DOM_EXC without a domain event"
"$XENSIM" destroy "$a" || fail "destroy"
wait_for 10 has "$out" '^DOM_EXC 1'
sleep 1 # let the checker drain and unmask
"$XENSIM" crash "$b" || fail "crash"
wait "$checker" || fail "virq check failed: $(cat "$out")"
cat "$out"
no_sanitizer_reports "$out"
exit 0
