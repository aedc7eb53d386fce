#!/usr/bin/env bash
# Every bad value in the clocked PCM's configuration makes the open fail with a
# message naming it, never a crash.
. "$(dirname "$0")/snd-functions.sh"
snd_setup
"$SNDGEN" -n 4800 -o "$TEST_TMP/a.wav" || fail "sndgen failed"
bad() { # WANT-IN-MESSAGE DIRECTION FIELDS...
    local want=$1 dir=$2 rc
    shift 2
    snd_asoundrc "$*"
    if [ "$dir" = p ]; then
        aplay -q -D clocked "$TEST_TMP/a.wav" 2>"$TEST_TMP/err"
    else
        arecord -q -D clocked -d 1 -f S16_LE -t raw /dev/null 2>"$TEST_TMP/err"
    fi
    rc=$?
    log "[$*]: exit $rc: $(head -1 "$TEST_TMP/err")"
    [ "$rc" -ne 0 ] || fail "[$*] was accepted"
    [ "$rc" -lt 128 ] || fail "[$*] killed the player (exit $rc)"
    grep -q "usclock: $want" "$TEST_TMP/err" || fail "[$*]: no 'usclock: $want' in: $(cat "$TEST_TMP/err")"
}
bad "unknown field colour" p 'colour "blue"'
bad "file must be a non-empty string" p 'file ""'
bad "file must be a non-empty string" p 'file 5'
bad "file $TEST_TMP/no/such/dir/rec: No such file or directory" p "file \"$TEST_TMP/no/such/dir/rec\""
bad "truncate must be a boolean" p 'truncate "maybe"'
bad "capture must be counter, clock, silence or file" c 'capture "noise"'
bad "capture file needs capture_file" c 'capture file'
bad "capture_file is only used with capture file" c 'capture_file "/dev/null"'
bad "capture_file $TEST_TMP/missing.raw: No such file or directory" c "capture file capture_file \"$TEST_TMP/missing.raw\""
# And a good block still plays.
snd_asoundrc "file \"$REC\" capture silence"
aplay -q -D clocked "$TEST_TMP/a.wav" || fail "a good configuration did not play"
