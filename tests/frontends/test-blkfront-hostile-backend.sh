#!/usr/bin/env bash
# A HOSTILE backend (seeded; SEED=N reproduces a run) answers with random
# ids, duplicates, wrong operations, impossible statuses, garbage ring
# indexes, extra responses, scribbled ring slots, junk xenstore states, event
# storms, or not at all, for a bounded time. The frontend (ASan+UBSan) must
# neither crash nor hang; since every act is detectable, the workload must
# also see no error and keep its data. Then the backend behaves again and
# the device ends live.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
SEED=${SEED:-$((RANDOM * 32768 + RANDOM))}
log "hostile seed: $SEED"
driver_setup 64 --seconds 24 --threads 4 --region-mib 16 --deadline-ms 300 --seed "$SEED" -- \
    cache=volatile -- --hostile "$SEED" --hostile-pct 2 --hostile-for-ms 15000 --hostile-after 300
wait_for 30 grep -q TESTBACK-HOSTILE-OVER "$TEST_TMP/drv0.log"
driver_done 60
acts=$(grep -c 'HOSTILE [a-z-]* (request' "$TEST_TMP/drv0.log")
kinds=$(grep -o 'HOSTILE [a-z-]* (request' "$TEST_TMP/drv0.log" | sed 's/HOSTILE //; s/ (request//' | sort -u | tr '\n' ' ')
rec=$(fe_key "$guest" "$DEV" shadow/recoveries)
log "seed $SEED: $acts hostile acts ($kinds), $rec recoveries"
[ "$acts" -ge 5 ] || fail "only $acts hostile acts"
[ "$rec" -ge 3 ] || fail "only $rec recoveries"
fe_is shadow/state live || fail "state $(fe_key "$guest" "$DEV" shadow/state) at the end"
exit 0
