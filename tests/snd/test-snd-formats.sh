#!/usr/bin/env bash
# The clocked PCM plays S16_LE, S24_LE and S32_LE, 1 to 8 channels, 8 to 192 kHz
# without conversion: each recording holds exactly the frames played, in one run.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
play() { # FORMAT CHANNELS RATE
    local frames=$(($3 / 4))
    rm -f "$REC"
    # raw: aplay reads a WAV's 24 bits in 32 as S32_LE
    "$SNDGEN" --raw -f "$1" -c "$2" -r "$3" -n "$frames" -o "$TEST_TMP/a.raw" || fail "sndgen $*"
    aplay -q -D clocked -t raw -f "$1" -c "$2" -r "$3" "$TEST_TMP/a.raw" || fail "aplay $*"
    check "$REC"
    local stream
    stream=$(grep '^stream' <<<"$CHECK_OUT")
    expect_eq "$* format" "$(field "$stream" format)" "$1"
    expect_eq "$* channels" "$(field "$stream" channels)" "$2"
    expect_eq "$* rate" "$(field "$stream" rate)" "$3"
    expect_line "^run first=0 last=$((frames - 1)) "
    expect_summary runs 1 gaps 0 result ok
}
for f in S16_LE S24_LE S32_LE; do play "$f" 2 48000; done
for c in 1 3 6 8; do play S16_LE "$c" 48000; done
for r in 8000 22050 96000 192000; do play S32_LE 2 "$r"; done
