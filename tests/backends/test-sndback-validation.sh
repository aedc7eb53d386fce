#!/usr/bin/env bash
# Every malformed request gets an error status (-XEN_E*) and a log line, and
# the backend goes on serving: requests on a stream not open, OPEN outside the
# advertised sets or with a bad buffer, period or grant directory, READ/WRITE
# past the buffer, volume values not in the buffer or out of range, bad
# triggers, unknown operations.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
vsnd_setup
out=$TEST_TMP/front.out
sfront_out "$out" "$guest" "$DEV" connect \
    fail write 0 0 4096 fail read 1 0 4096 fail trigger 0 start fail close 0 \
    fail setvol 0 0 0 fail raw 0 42 \
    fail open 0 12345 s16_le 2 65536 4096 \
    fail open 0 48000 s8 2 65536 4096 \
    fail open 0 48000 77 2 65536 4096 \
    fail open 0 48000 s16_le 3 65536 4096 \
    fail open 0 48000 s16_le 0 65536 4096 \
    fail open 0 48000 s16_le 2 0 4096 \
    fail open 0 48000 s16_le 2 300000 4096 \
    fail open 0 48000 s16_le 2 65534 4096 \
    fail open 0 48000 s16_le 2 65536 131072 \
    fail open 0 48000 s16_le 2 65536 4098 \
    sleep 1100 fail badopen 0 badref 48000 s16_le 2 65536 4096 \
    fail badopen 0 zero 48000 s16_le 2 65536 4096 \
    open 0 48000 s16_le 2 65536 4096 \
    fail open 0 48000 s16_le 2 65536 4096 \
    fail write 0 65532 8 fail write 0 4 4294967292 fail write 0 4294967295 4 \
    fail write 0 0 65540 fail write 0 0 6 fail read 0 0 4096 \
    fail raw 0 4 65532 8 fail raw 0 4 0 4 fail setvol 0 30000 0 \
    fail raw 0 6 65535 2 \
    fail trigger 0 7 fail trigger 0 resume fail trigger 0 pause \
    fail raw 0 42 fail raw 0 255 \
    write 0 0 4096 write 0 61440 4096 trigger 0 start trigger 0 pause trigger 0 resume \
    trigger 0 stop close 0 disconnect || fail "frontend failed"
n=$(grep -c ': status -' "$out")
expect_eq "requests refused" "$n" 34
grep -q 'refused' "$SB_LOG" || fail "no refusal logged"
# (after a pause: the lines before fill the rate limiter's second)
grep -q 'OPEN refused: a buffer page cannot be mapped' "$SB_LOG" || fail "bad buffer ref not logged"
grep -q 'OPEN refused: a grant directory page cannot be mapped' "$SB_LOG" ||
    fail "bad directory ref not logged"
sndback_alive || fail "sndback exited"
exit 0
