# tests/snd/snd-functions.sh - sourced by the sound instruments' tests (see README.md).
# shellcheck source=../functions.sh
. "$(dirname "${BASH_SOURCE[0]}")/../functions.sh"

SNDGEN=$TPROG/snd/sndgen
SNDCHECK=$TPROG/snd/sndcheck
SNDLEVEL=$TPROG/snd/sndlevel
USCLOCK_SO=$TPROG/snd/libasound_module_pcm_usclock.so

# snd_setup: skip without ALSA's tools or the instruments; point HOME at a
# directory whose .asoundrc defines pcm.clocked recording to $REC.
snd_setup() {
    requires aplay arecord bc
    [ -f "$USCLOCK_SO" ] || skip "the clocked test PCM is not built (libasound2-dev missing?)"
    [ -x "$SNDGEN" ] && [ -x "$SNDCHECK" ] || skip "sndgen or sndcheck not built"
    REC=$TEST_TMP/rec.usck
    export HOME=$TEST_TMP/home
    mkdir -p "$HOME"
    snd_asoundrc "file \"$REC\""
}

# snd_asoundrc FIELDS...: (re)write .asoundrc: pcm.clocked { type usclock FIELDS }.
snd_asoundrc() {
    cat >"$HOME/.asoundrc" <<EOF
pcm_type.usclock { lib "$USCLOCK_SO" }
pcm.clocked { type usclock $* }
EOF
}

# timed VAR CMD...: run CMD (failing the test if it fails); VAR = its wall seconds.
timed() {
    local __v=$1 s e
    shift
    s=$(date +%s.%N)
    "$@" || fail "$* failed (exit $?)"
    e=$(date +%s.%N)
    printf -v "$__v" '%s' "$(echo "$e - $s" | bc)"
}

# expect_ratio WHAT GOT WANT LO HI: GOT/WANT lies in [LO, HI].
expect_ratio() {
    local r
    r=$(echo "scale=3; $2 / $3" | bc)
    log "$1: $2 / $3 = $r (want $4..$5)"
    [ "$(echo "$r >= $4 && $r <= $5" | bc)" = 1 ] || fail "$1: ratio $r outside $4..$5"
}

# field LINE KEY: the value of KEY=... in one line of sndcheck's text output.
field() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<"$1"; }

# check FILE [OPTS...]: run sndcheck; CHECK_OUT = its output, CHECK_RC = its exit
# status, SUMMARY = its summary line. A sanitizer report fails the test.
check() {
    local f=$1
    shift
    CHECK_RC=0
    CHECK_OUT=$("$SNDCHECK" "$@" "$f" 2>"$TEST_TMP/sndcheck.err") || CHECK_RC=$?
    printf '%s\n' "$CHECK_OUT" | sed 's/^/  | /'
    [ "$CHECK_RC" -ne 86 ] || fail "sanitizer report from sndcheck: $(cat "$TEST_TMP/sndcheck.err")"
    SUMMARY=$(grep '^summary\|^{"event":"summary"' <<<"$CHECK_OUT")
    [ -n "$SUMMARY" ] || fail "sndcheck gave no summary (exit $CHECK_RC): $(cat "$TEST_TMP/sndcheck.err")"
}

# expect_summary KEY VALUE...: the last check's summary has each KEY=VALUE.
expect_summary() {
    while [ $# -ge 2 ]; do
        expect_eq "summary $1" "$(field "$SUMMARY" "$1")" "$2"
        shift 2
    done
}

# expect_line REGEX: the last check's output has a line matching REGEX.
expect_line() { grep -qE "$1" <<<"$CHECK_OUT" || fail "no line matching '$1' in sndcheck's output"; }

# aplay_stopped_in_poll PCM: aplay plays 4 s of the signal from a file (never
# short of data, so it waits in poll for room) through PCM, 1024-frame
# periods, a 4096-frame buffer, and is stopped (SIGSTOP) three times for 0.3 s
# - 3.5 buffers - while it waits: it must hear each as an xrun (-EPIPE:
# prepare again, play on), not fail (-EIO: "write error: Input/output
# error"), and report at least one underrun.
aplay_stopped_in_poll() {
    local a k n
    "$SNDGEN" --raw -d 4 -o "$TEST_TMP/a.raw" || fail "sndgen failed"
    aplay -D "$1" -t raw -f S16_LE -c 2 -r 48000 --period-size=1024 --buffer-size=4096 \
        "$TEST_TMP/a.raw" 2>"$TEST_TMP/aplay.err" &
    a=$!
    sleep 0.8
    for k in 1 2 3; do
        kill -STOP $a 2>/dev/null || fail "aplay ended before stop $k: $(cat "$TEST_TMP/aplay.err")"
        sleep 0.3 # 3.5 buffers
        kill -CONT $a
        sleep 0.5
    done
    wait $a || fail "aplay failed after a stop in poll: $(cat "$TEST_TMP/aplay.err")"
    n=$(grep -c 'underrun!!!' "$TEST_TMP/aplay.err")
    log "aplay saw $n underruns"
    [ "$n" -ge 1 ] || fail "no underrun for three stops of 3.5 buffers: $(cat "$TEST_TMP/aplay.err")"
}
