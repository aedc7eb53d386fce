#!/usr/bin/env bash
# The ASan-built plugin inside nbdkit, under ext4 over nbdfuse, against a
# HOSTILE backend for a bounded time (seeded; SEED=N reproduces): no crash,
# no hang, no error reaching the filesystem, fsck clean, every fsynced file
# intact. The backend keeps its domain; the frontend reconnects to it each
# time by the standard close/reinitialise handshake.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
private_mounts "$@"
SEED=${SEED:-$((RANDOM * 32768 + RANDOM))}
log "hostile seed: $SEED"
nbd_setup 256 deadline-ms=400 -- cache=volatile -- --hostile "$SEED" --hostile-pct 2 \
    --hostile-for-ms 15000 --hostile-after 200
workload_start 22 "$((SEED % 32768))"
wait_for 60 grep -q TESTBACK-HOSTILE-OVER "$TEST_TMP/drv0.log"
workload_done
nbd_finish
acts=$(grep -c 'HOSTILE [a-z-]* (request' "$TEST_TMP/drv0.log")
rec=$(fe_key "$guest" "$DEV" shadow/recoveries)
log "seed $SEED: $acts hostile acts ($(grep -o 'HOSTILE [a-z-]* (request' "$TEST_TMP/drv0.log" | sed 's/HOSTILE //; s/ (request//' | sort -u | tr '\n' ' ')), $rec recoveries"
[ "$acts" -ge 3 ] || fail "only $acts hostile acts"
[ "$rec" -ge 2 ] || fail "only $rec recoveries"
exit 0
