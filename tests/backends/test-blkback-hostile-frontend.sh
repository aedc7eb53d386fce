#!/usr/bin/env bash
# A hostile frontend (blkhostile: seeded random requests, garbage ring
# indexes, random grant refs, unmappable rings, rewritten ring slots,
# reconnections) for a bounded time: blkback never crashes or hangs -
# every request it took is answered with a valid status, it is ASan/UBSan
# clean, and it still serves a good frontend afterwards. The seed is
# printed; rerun one with BLKHOSTILE_SEED=<seed>.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
seed=${BLKHOSTILE_SEED:-$(( $(date +%s%N) % 1000000007 ))}
secs=${BLKHOSTILE_SECONDS:-20}
log "seed=$seed seconds=$secs"
vbd_setup
out=$TEST_TMP/hostile.out
as_dom "$guest" "$TPROG/backends/blkhostile" "$(vbd_fe "$guest" $DEV)" "$seed" "$secs" >"$out" 2>&1
rc=$?
tail -5 "$out"
[ $rc -eq 0 ] || fail "hostile frontend (seed $seed) reported a failure: $(grep -m1 HOSTILE-FAIL "$out")"
grep -q HOSTILE-OK "$out" || fail "hostile frontend did not finish"
blkback_alive || fail "blkback died (seed $seed): $(tail -5 "$BB_LOG")"
grep -q 'not serving this ring' "$BB_LOG" || fail "no garbage index was detected (seed $seed)"
blkfront "$guest" $DEV connect write 0 64 5 read 0 64 5 close || fail "good frontend refused after"
n=$(wc -l <"$BB_LOG")
log "blkback log: $n lines"
exit 0
