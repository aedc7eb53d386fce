#!/usr/bin/env bash
# A hostile frontend for a bounded time under ASan: random requests on both
# streams (any operation and field), OPEN with broken grant directories and
# bad refs, offsets and lengths past the buffer, triggers in any order, a
# scribbled event-page index. sndback never crashes, hangs or touches memory
# outside its buffers (ASan), and still answers afterwards.
# SBHOSTILE_SEED and SBHOSTILE_SECONDS override the defaults.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
vsnd_setup
seed=${SBHOSTILE_SEED:-$RANDOM}
secs=${SBHOSTILE_SECONDS:-15}
log "seed $seed, $secs s"
out=$TEST_TMP/front.out
sfront_out "$out" "$guest" "$DEV" connect hostile "$secs" "$seed" disconnect ||
    fail "hostile frontend failed (seed $seed)"
grep -q '^hostile: .* backend answering' "$out" || fail "backend not answering after the run"
sndback_alive || fail "sndback exited (seed $seed)"
# And a conforming frontend is served afterwards.
sfront "$guest" "$DEV" connect open 0 48000 s16_le 2 8192 1024 write 0 0 4096 close 0 disconnect ||
    fail "not served after the hostile run (seed $seed)"
exit 0
