#!/usr/bin/env bash
# cache=volatile is bounded by what it allocates, not by the data it holds: a
# guest writing one sector every 4 KiB (512 bytes held per 4 KiB chunk) and
# never flushing makes blkback write its cache back once the chunks take its
# limit (64 MiB), not eight times that; blkback's memory stays near the limit,
# and every write is there after (held or written back).
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/vbd-functions.sh"
VBD_SIZE=96M vbd_setup cache=volatile
out=$TEST_TMP/front.out
# 20000 sectors 8 apart: 78 MiB of chunks, 9.8 MiB of data.
blkfront_bg "$out" "$guest" $DEV --timeout 120 connect scatter 0 20000 8 7 sleep 60000
fpid=$FRONT_PID
wait_for 120 grep -q 'ok: scattered' "$out"
cat "$out"
grep -q 'volatile cache holds over 64 MiB: writing it back' "$BB_LOG" ||
    fail "20000 one-sector writes 4 KiB apart (78 MiB of chunks) were not written back"
rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$BB_PID/status")
log "blkback's RSS after them: $((rss / 1024)) MiB"
# ASan's shadow memory and quarantine come on top of the cache's 64 MiB.
[ "$rss" -lt $((200 * 1024)) ] || fail "blkback holds $((rss / 1024)) MiB"
# The first written back, the last still held: both read back.
"$BLKFRONT" --check-file "$img" 0 1 7 || fail "the first write did not reach the file"
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
blkfront "$guest" $DEV connect read 0 1 7 read $((19999 * 8)) 1 7 close || fail "reading them back"
blkback_alive || fail "blkback exited"
exit 0
