#!/usr/bin/env bash
# HW_PARAM_QUERY narrows each range to what the stream advertises (the card's
# s16_le,s32_le at 44100,48000 Hz, 1..2 channels, a 262144-octet buffer) and to
# what the PCM takes; a query that leaves nothing gets an error status.
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/vsnd-functions.sh"
vsnd_setup
out=$TEST_TMP/front.out
sfront_out "$out" "$guest" "$DEV" connect \
    query 0 0xffffffff 1 1000000 1 8 1 1000000 1 1000000 \
    query 0 0x4 46000 50000 2 8 1 1000000 64 256 \
    query 1 0xffffffff 1 44100 1 1 1 1000000 1 1000000 \
    fail query 0 0xffffffff 8000 16000 1 2 1 1000000 1 1000000 \
    fail query 0 0x1 1 1000000 1 2 1 1000000 1 1000000 \
    fail query 0 0xffffffff 1 1000000 3 8 1 1000000 1 1000000 \
    open 0 48000 s16_le 2 65536 4096 \
    query 0 0xffffffff 1 1000000 1 8 1 1000000 1 1000000 close 0 disconnect ||
    fail "frontend failed"
mapfile -t q < <(grep '^query formats' "$out")
expect_eq "queries answered" "${#q[@]}" 4
# Everything asked: the advertised sets (bits 2 and 10: s16_le, s32_le).
expect_eq "formats" "$(field "${q[0]}" formats)" 0x404
expect_eq "rates" "$(field "${q[0]}" rates)" 44100..48000
expect_eq "channels" "$(field "${q[0]}" channels)" 1..2
bmax=$(field "${q[0]}" buffer | cut -d. -f3)
[ "$bmax" -le 131072 ] || fail "buffer max $bmax frames: over 262144 octets of 2-octet frames"
# Narrowed by the question.
expect_eq "narrowed formats" "$(field "${q[1]}" formats)" 0x4
expect_eq "narrowed rates" "$(field "${q[1]}" rates)" 48000..48000
expect_eq "narrowed channels" "$(field "${q[1]}" channels)" 2..2
expect_eq "narrowed period" "$(field "${q[1]}" period)" 64..256
expect_eq "capture rates" "$(field "${q[2]}" rates)" 44100..44100
# An open stream answers with its own configuration.
expect_eq "open stream's formats" "$(field "${q[3]}" formats)" 0x4
expect_eq "open stream's rates" "$(field "${q[3]}" rates)" 48000..48000
expect_eq "open stream's channels" "$(field "${q[3]}" channels)" 2..2
sndback_alive || fail "sndback exited"
exit 0
