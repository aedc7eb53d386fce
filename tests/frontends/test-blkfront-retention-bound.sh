#!/usr/bin/env bash
# Retention is bounded: a workload that never flushes, over a volatile
# cache, makes the frontend flush by itself each time the acknowledged but
# unflushed writes reach max-retained-mib (1 MiB here), and nothing is lost
# when the backend dies anyway.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
driver_setup 64 --seconds 16 --threads 4 --region-mib 16 --flush-every 0 --max-retained-mib 1 \
    --deadline-ms 2000 --seed 16 -- cache=volatile
for i in 1 2 3 4; do
    progress_after $((i * 3))
    next_backend
    live_again "$i"
done
driver_done
n=$(grep -c 'retention bound: [0-9]* bytes held' "$TEST_TMP/guest.log")
max=$(sed -n 's/.*retention bound: \([0-9]*\) bytes held.*/\1/p' "$TEST_TMP/guest.log" | sort -n | tail -1)
log "$n forced flushes; the most held (retained + in flight) at one: $max bytes"
[ "$n" -ge 10 ] || fail "only $n forced flushes"
[ "$max" -le 1048576 ] || fail "held $max bytes, over the 1 MiB bound"
exit 0
