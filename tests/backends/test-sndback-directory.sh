#!/usr/bin/env bash
# OPEN of a buffer that needs a chain of two grant directory pages (1280
# pages: 1023 refs in the first, the rest in the second): the chain is
# followed and the buffer served; a chain that ends early, a next-page ref or a
# buffer ref in the second page that does not map are refused; a looping chain
# is only read as far as the refs needed.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
card=("${VSND_CARD[@]/buffer-size=262144/buffer-size=8388608}")
vsnd_setup "${card[@]}"
big=5242880 # 1280 pages
out=$TEST_TMP/front.out
sfront_out "$out" "$guest" "$DEV" connect \
    open 0 48000 s16_le 2 $big 4096 write 0 $((big - 4096)) 4096 close 0 \
    fail badopen 0 shortchain 48000 s16_le 2 $big 4096 \
    fail badopen 0 badnext 48000 s16_le 2 $big 4096 \
    fail badopen 0 badref2 48000 s16_le 2 $big 4096 \
    badopen 0 loop 48000 s16_le 2 $big 4096 close 0 \
    open 0 48000 s16_le 2 4096 1024 close 0 disconnect || fail "frontend failed"
grep -q 'OPEN refused: grant directory ends before the buffer' "$SB_LOG" ||
    fail "short chain not logged"
grep -q "stream 0/0 open: clocked, 48000 Hz, s16_le, 2 ch, buffer $big" "$SB_LOG" ||
    fail "the two-page buffer was not opened"
sndback_alive || fail "sndback exited"
exit 0
