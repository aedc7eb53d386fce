#!/usr/bin/env bash
# sndcheck on bad input: a missing file, garbage, bad options exit 2 with a message;
# a recording whose last record was cut short (a sink killed mid-write) is read up
# to it and says so.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
expect_rc() { # WANT CMD...
    local want=$1 rc=0
    shift
    "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" || rc=$?
    log "$*: exit $rc: $(head -1 "$TEST_TMP/err")"
    expect_eq "exit status of $*" "$rc" "$want"
}
expect_rc 2 "$SNDCHECK" "$TEST_TMP/missing"
grep -q "No such file" "$TEST_TMP/err" || fail "no reason given for a missing file"
head -c 5000 /dev/urandom >"$TEST_TMP/garbage"
expect_rc 2 "$SNDCHECK" "$TEST_TMP/garbage"
printf 'USCKxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' >"$TEST_TMP/badrec"
expect_rc 2 "$SNDCHECK" "$TEST_TMP/badrec"
printf 'RIFF\0\0\0\0WAVEjunk' >"$TEST_TMP/bad.wav"
expect_rc 2 "$SNDCHECK" "$TEST_TMP/bad.wav"
expect_rc 2 "$SNDCHECK" --format S16_LE "$TEST_TMP/garbage"
expect_rc 2 "$SNDGEN" -d 1 --cut 5 -o "$TEST_TMP/x.wav"
expect_rc 2 "$SNDGEN" -d 1 -c 9 -o "$TEST_TMP/x.wav"

"$SNDGEN" -n 48000 -o "$TEST_TMP/a.wav" || fail "sndgen failed"
aplay -q -D clocked "$TEST_TMP/a.wav" || fail "aplay failed"
expect_rc 2 "$SNDCHECK" --max-gaps -1 "$REC"
expect_rc 2 "$SNDCHECK" --timing --ref "$TEST_TMP/bad.wav" "$REC"
grep -q "reference" "$TEST_TMP/err" || fail "no reason given for a bad reference"
size=$(stat -c %s "$REC")
head -c $((size - 100)) "$REC" >"$TEST_TMP/cut.usck"
check "$TEST_TMP/cut.usck"
expect_line '^truncated bytes='
expect_summary gaps 0 repeats 0 corrupt 0 result ok
