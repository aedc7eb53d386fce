#!/usr/bin/env bash
# snd-cell.sh - one sound row of the application table in one column, on
# xensim (run by run-campaign; README.md there has the rules).
#
# Setup, as in tests/sim/test-snd-shadowd-faults.sh: shadowd keeps a driver
# domain "drv" running understudy-agent, which starts sndback for the guest's
# vsnd device; the guest runs understudy-sndfront; programs play and record
# through the shadow PCM (pcm "understudy"); sndback's card is the clocked
# test PCM, which records what it played (and numbers what it captures by
# its clock). Rows:
#   mp3       mpg123 plays an mp3 (SECS s); the card must have played mpg123's
#             own decode, frame for frame, but for one cut per recovery
#   speech    espeak-ng | aplay (about SECS s of speech); the same against
#             espeak-ng's own output
#   recorder  arecord records SECS s; the file must hold the card's frames
#             in order, with one cut per recovery
#   clips     a game's sounds: a 0.25 s clip every 0.6 s, each its own aplay;
#             every clip must start on time and none may repeat
# Verdicts (README.md): CRASH - the program failed or had to be killed;
# MALFUNCTION - it exited 0 but what the card played or the file holds is
# wrong (a repeat, damage, audio missing where no recovery was, a cut longer
# than CUT_MS, more cuts than recoveries) or it stalled; SUCCESS otherwise.
# usage: snd-cell.sh ROW COLUMN   (environment: campaign-lib.sh)
ROW=$1 COLUMN=$2
. "$(dirname "$0")/../snd/snd-functions.sh"
. "$(dirname "$0")/../backends/vsnd-functions.sh"
. "$(dirname "$0")/../frontends/snd-functions.sh"
. "$(dirname "$0")/campaign-lib.sh"
requires jq xenstore-read mpg123 lame sox espeak-ng
# The longest cut a recovery may make: the frontend's deadline (1 s: a hung
# backend is noticed no sooner) and a second for shadowd and the reconnect.
CUT_MS=${CUT_MS:-2000}
# The restart column: the frontend's restart-only mode (--shadow off) - it
# reconnects to the restarted domain, but a new backend gets no stream back:
# the program's audio goes nowhere until it prepares its PCM again, as with
# a stock driver that restarts.
FE_MODE=()
case $COLUMN in
shadow | none) ;;
restart) FE_MODE=(--shadow off) ;;
*) fail "unknown column $COLUMN" ;;
esac

[ "$ROW" = speech ] && VSND_CARD=("${VSND_CARD[@]/#sample-rates=*/sample-rates=22050,44100,48000}")
snd_setup
snd_asoundrc "file \"$REC\" capture clock"
[ -x "$SNDBACK" ] && [ -x "$SNDFRONT" ] && [ -f "$SND_PCM_SO" ] && [ -x "$AGENT" ] ||
    skip "the sound class or the agent is not built"
snd_fe_asoundrc
start_sim
on_exit '[ "$rc" -eq 0 ] || snd_dump_logs'
# Every report a fault makes must be answered: no budget of report-triggered
# recoveries (the default, 3 in its window, would ignore the fourth corrupt).
sd_conf "report-budget 1000" "report-window 10m"
sd_domain drv "command $AGENT --handler vsnd=$SNDBACK --heartbeat-ms 100" "heartbeat-timeout 1s" \
    "restart-budget 64" "restart-window $SD_RESTART_WINDOW" "backoff-initial 100ms" "backoff-max 400ms" "reconnect-timeout 20s"
sd_start
d=$(sd_wait_up drv)
guest=$(sndfront_dom guest --deadline-ms 1000 "${FE_MODE[@]}")
# As libxl writes them: the frontend dir (with the card) first, each in one
# transaction with its permissions; the agent starts sndback at once.
"$XSDEV" "$(vsnd_fe "$guest" "$DEV")" "n$guest,r$d" backend="$(vsnd_be "$d" "$guest" "$DEV")" \
    backend-id="$d" state=1 shadow/generation=0 "${VSND_CARD[@]}" || fail "the frontend dir"
"$XSDEV" "$(vsnd_be "$d" "$guest" "$DEV")" "n$d,r$guest" frontend="$(vsnd_fe "$guest" "$DEV")" \
    frontend-id="$guest" online=1 state=1 || fail "the backend dir"
touch "$TEST_TMP/go.guest"
CMP_FE=$(vsnd_fe "$guest" "$DEV")
wait_for 15 _cmp_live_ge 0
wait_for 10 sd_recorded_is drv 1
# No recovery: shadowd, having started the domain, stops; nothing restarts it.
[ "$COLUMN" = none ] && sd_stop

# The verdict, after what the judge saw (in the cell's log).
verdict() {
    grep -E '^(ref-|gap |summary|silence )' <<<"${CHECK_OUT:-}" | head -n 200
    cmp_cell "$1" "$2"
    exit 0
}
# cuts_ok < "AT_MS MS" lines: every cut of the audio (AT_MS after the
# program started, MS long) is at most CUT_MS and falls in a fault's window:
# from 0.5 s before a fault to 1 s after its recovery (a slow device: to 2 s
# after it ends - real-time audio that cannot be played on time is dropped).
# A cut anywhere else is audio lost with no fault to explain it.
cuts_ok() {
    local win
    win=$(cmp_windows | tr '\n' ' ')
    awk -v cut="$CUT_MS" -v win="$win" '
        BEGIN { n = split(win, w, " ") }
        { at = $1; ms = $2
          if (ms > cut) { printf "a cut of %.0f ms at %.1f s (the most a recovery may cut: %d ms)\n", ms, at / 1000, cut; bad = 1; exit 1 }
          ok = 0
          for (i = 1; i < n; i += 2) if (at >= w[i] && at <= w[i + 1]) ok = 1
          if (!ok) { printf "a cut of %.0f ms at %.1f s, where no fault was\n", ms, at / 1000; bad = 1; exit 1 } }
        END { exit bad }'
}
# start_prog CMD...: run CMD in the background (PID); its end time goes to
# $TEST_TMP/prog.end, so that its wall time does not count our waiting.
# level_series SECS: the card's level over the program's time, every 50 ms
# (the plot's series; the sound rows have no counter for cmp_series).
level_series() {
    mkdir -p "$CAMPAIGN_OUT/series"
    {
        echo "# t_ms level t0_ms=$PROG_T0"
        "$SNDLEVEL" --window-ms 50 --until-s "$1" "$REC" | awk '{ printf "%d %s\n", $1 * 1000, $2 }'
    } >"$CAMPAIGN_OUT/series/$ROW.$COLUMN.tsv"
}
start_prog() {
    ("$@"; r=$?; date +%s.%N >"$TEST_TMP/prog.end"; exit $r) 2>"$TEST_TMP/prog.err" &
    pid=$!
}
prog_wall() { echo "$(cat "$TEST_TMP/prog.end") - $1" | bc; }

# Faults come every 0.9-2.4 s while the program runs (after a second).
GAP_MIN=0.9 GAP_SPAN=15
case $ROW in
mp3 | speech)
    if [ "$ROW" = mp3 ]; then
        sox -n -r 44100 -c 2 -b 16 "$TEST_TMP/src.wav" synth "$SECS" sine 440 sine 660 vol 0.5 ||
            fail "sox synth"
        lame --quiet "$TEST_TMP/src.wav" "$TEST_TMP/a.mp3" || fail "lame"
        mpg123 -q -w "$TEST_TMP/ref.wav" "$TEST_TMP/a.mp3" || fail "mpg123 -w"
        prog=(mpg123 -q -o alsa -a understudy "$TEST_TMP/a.mp3")
    else
        # Speech at 22050 Hz mono, as espeak-ng writes it (the card offers it:
        # set before the card is written, below).
        # Sentences that never repeat: the judge finds where the card's audio
        # is in espeak-ng's by its waveform, and a sentence spoken twice is the
        # same waveform twice - after a cut it may pick the wrong one and call
        # the audio between extra. Six words from a list, drawn with the
        # cell's seed, and a sentence number.
        words=$(awk -v seed="$SEED" -v n=$((SECS / 3 + 1)) 'BEGIN {
            split("amber river quietly seven lantern orbit copper meadow fragile thunder velvet " \
                  "harbor crimson pillow distant marble echo saddle winter crystal hollow basket " \
                  "violet engine silver falcon garden rocket candle mirror pepper ladder canyon " \
                  "tunnel jacket puzzle island motor shadow button signal feather planet cotton " \
                  "summer anchor forest wagon silent bridge ocean letter kettle mountain", w, " ")
            srand(seed)
            for (k = 0; k < n; k++) {
                printf "Sentence %d:", k
                for (i = 0; i < 6; i++) printf " %s", w[int(rand() * length(w)) + 1]
                printf ". "
            } }')
        espeak-ng --stdout "$words" >"$TEST_TMP/ref.wav" || fail "espeak-ng"
        prog=(bash -c 'espeak-ng --stdout "$1" | aplay -q -D understudy' _ "$words")
    fi
    check "$TEST_TMP/ref.wav"
    rate=$(field "$(grep '^stream' <<<"$CHECK_OUT")" rate)
    dur=$(echo "scale=3; $(field "$SUMMARY" frames) / $rate" | bc)
    : >"$REC"
    s=$(date +%s.%N)
    PROG_T0=$(cmp_now_ms)
    start_prog "${prog[@]}"
    sleep 1
    cmp_faults $pid $GAP_MIN $GAP_SPAN
    cmp_run_timed $pid "$dur" || verdict CRASH "${prog[0]} exited $? : $(tail -c 300 "$TEST_TMP/prog.err")"
    wall=$(prog_wall "$s")
    sleep 1 # the last sndback plays out the tail
    level_series "$wall"
    check "$REC" --timing --ref "$TEST_TMP/ref.wav"
    [ "$(field "$SUMMARY" ref_differ)" = 0 ] && [ "$(field "$SUMMARY" ref_extra)" = 0 ] ||
        verdict MALFUNCTION "the card played what the program did not: $SUMMARY"
    mapfile -t cuts < <(grep '^ref-missing' <<<"$CHECK_OUT" | while read -r l; do field "$l" ms; done)
    why=$(grep '^ref-missing' <<<"$CHECK_OUT" | while read -r l; do
        echo "$(($(field "$l" ref_at) * 1000 / rate)) $(field "$l" ms)"
    done | cuts_ok) || verdict MALFUNCTION "$why"
    [ "$(echo "$wall <= $dur * 1.2 + 1" | bc)" = 1 ] ||
        verdict MALFUNCTION "a stall: $wall s for $dur s of audio"
    verdict SUCCESS "${#cuts[@]} cuts (${cuts[*]:-none} ms), $wall s for $dur s of audio"
    ;;
recorder)
    s=$(date +%s.%N)
    PROG_T0=$(cmp_now_ms)
    start_prog arecord -q -D understudy -f S16_LE -c 2 -r 48000 -d "$SECS" "$TEST_TMP/c.wav"
    sleep 1
    cmp_faults $pid $GAP_MIN $GAP_SPAN
    cmp_run_timed $pid "$SECS" || verdict CRASH "arecord exited $?: $(tail -c 300 "$TEST_TMP/prog.err")"
    wall=$(prog_wall "$s")
    check "$TEST_TMP/c.wav"
    for k in repeats channel_errors corrupt format_errors; do
        [ "$(field "$SUMMARY" $k)" = 0 ] || verdict MALFUNCTION "the file is damaged: $SUMMARY"
    done
    [ "$(field "$SUMMARY" frames)" = $((SECS * 48000)) ] ||
        verdict MALFUNCTION "$(field "$SUMMARY" frames) frames for $SECS s"
    mapfile -t cuts < <(snd_gaps | awk '{print $2}')
    # While there is no backend the program records silence; the card's
    # frames must come back: the file may not end in more than a cut of it.
    last=$(grep '^run ' <<<"$CHECK_OUT" | tail -n 1)
    [ -n "$last" ] || verdict MALFUNCTION "none of the card's frames in the file"
    tail_ms=$(echo "$SECS * 1000 - $(field "$last" t_ms) - $(field "$last" frames) / 48" | bc)
    [ "${tail_ms%.*}" -le "$CUT_MS" ] 2>/dev/null ||
        verdict MALFUNCTION "the last $tail_ms ms are silence: the card never came back"
    # The capture clock numbers frames by time: from the file's first frame.
    f0=$(field "$(grep -m1 '^run ' <<<"$CHECK_OUT")" first)
    why=$(grep '^gap ' <<<"$CHECK_OUT" | while read -r l; do
        echo "$((($(field "$l" after) - f0) / 48)) $(field "$l" stream_ms)"
    done | cuts_ok) || verdict MALFUNCTION "$why"
    [ "$(echo "$wall <= $SECS * 1.2 + 1" | bc)" = 1 ] || verdict MALFUNCTION "a stall: $wall s for $SECS s"
    verdict SUCCESS "${#cuts[@]} cuts (${cuts[*]:-none} ms), $wall s for $SECS s"
    ;;
clips)
    N=$((SECS * 10 / 6)) CLIP=12000 # 0.25 s at 48 kHz, every 0.6 s
    for ((k = 0; k < N; k++)); do
        "$SNDGEN" -r 48000 -f S16_LE -c 2 -n $CLIP --start $((k * 100000)) -o "$TEST_TMP/clip$k.wav" ||
            fail "sndgen"
    done
    # One clip at a time, each due 0.6 s after the last (the card has one
    # playback stream): "K RC SECONDS LATE" - how long its aplay took and
    # how late after its due time it started.
    # Times in microseconds from bash's own clock: no process per clip but
    # aplay, so a busy machine does not make the schedule slip.
    us() { local t=${EPOCHREALTIME/./}; echo "${t#0}"; }
    play() {
        local k=$1 due=$2 s e rc=0
        s=$(us)
        timeout 10 aplay -q -D understudy "$TEST_TMP/clip$k.wav" 2>>"$TEST_TMP/prog.err" || rc=$?
        e=$(us)
        printf '%d %d %d.%06d %d.%06d\n' "$k" "$rc" $(((e - s) / 1000000)) $(((e - s) % 1000000)) \
            $(((s - due) / 1000000)) $(((s - due) % 1000000)) >>"$TEST_TMP/clips.txt"
    }
    : >"$TEST_TMP/clips.txt"
    t0=$(us)
    PROG_T0=$((t0 / 1000))
    (
        for ((k = 0; k < N; k++)); do
            due=$((t0 + k * 600000))
            now=$(us)
            [ "$now" -ge "$due" ] || sleep "$(((due - now) / 1000000)).$(printf %06d $(((due - now) % 1000000)))"
            play "$k" "$due"
        done
    ) &
    pid=$!
    sleep 1
    cmp_faults $pid $GAP_MIN $GAP_SPAN
    cmp_run_timed $pid "$SECS" || verdict CRASH "the clips' player was killed"
    sleep 1
    sed 's/^/clip /' "$TEST_TMP/clips.txt"
    while read -r k rc secs late; do
        [ "$rc" -eq 0 ] || verdict CRASH "clip $k: aplay exited $rc: $(tail -c 300 "$TEST_TMP/prog.err")"
        # A clip may not wait on a recovery: 0.25 s of audio, and a second
        # (the frontend's deadline) for aplay's start on a busy machine; nor
        # start more than a second after it was due.
        [ "$(echo "$secs <= 1.25 && $late <= 1" | bc)" = 1 ] ||
            verdict MALFUNCTION "clip $k took $secs s, started $late s late (a stall)"
    done <"$TEST_TMP/clips.txt"
    [ "$(wc -l <"$TEST_TMP/clips.txt")" = $N ] || verdict CRASH "$(wc -l <"$TEST_TMP/clips.txt") of $N clips played"
    check "$REC"
    [ "$(field "$SUMMARY" repeats)" = 0 ] && [ "$(field "$SUMMARY" corrupt)" = 0 ] ||
        verdict MALFUNCTION "a repeat or damage: $SUMMARY"
    # A clip a recovery cut short or swallowed is allowed: every clip not
    # played whole must have been playing (due to its aplay's end) inside a
    # fault's window; its end is what is checked.
    whole=$(grep '^run ' <<<"$CHECK_OUT" | while read -r l; do
        f=$(field "$l" first) n=$(field "$l" frames)
        [ $((f % 100000)) -eq 0 ] && [ "$n" -eq $CLIP ] && echo $((f / 100000))
    done | sort -un)
    missed=$(for ((k = 0; k < N; k++)); do grep -qx "$k" <<<"$whole" || echo "$k"; done)
    why=$(for k in $missed; do
        awk -v k="$k" '$1 == k { printf "%d 0\n", k * 600 + ($4 + $3) * 1000 }' "$TEST_TMP/clips.txt"
    done | cuts_ok) ||
        verdict MALFUNCTION "a clip not played whole: ${why/a cut of 0 ms/a clip due}"
    verdict SUCCESS "$N clips on time, $(wc -w <<<"$missed") cut or lost in faults' windows"
    ;;
*) fail "unknown sound row $ROW" ;;
esac
