# tests/frontends/snd-functions.sh - the sound class on xensim: a guest whose
# main process is understudy-sndfront, driver domains whose main process is
# sndback playing into (and capturing from) the clocked test PCM, programs
# playing through the shadow PCM, and the stand-in toolstack's recovery.
# Source after tests/snd/snd-functions.sh and tests/backends/vsnd-functions.sh.
#
#   snd_fe_setup [FRONT-ARGS...]   snd_setup (the clocked PCM's capture: capture clock),
#                          the sim, the guest (its frontend on device/vsnd/$DEV, socket
#                          $SOCK) and driver domain drv0 with sndback (SND_FE_DRV=FUNC:
#                          drv0 started by FUNC NAME instead of sndback_dom); waits until
#                          the card is live. Sets guest, drv.
#   snd_fe_asoundrc        (by snd_fe_setup) the card for programs in ~/.asoundrc, on $SOCK:
#                          pcm.understudy (the shadow PCM) and ctl.understudy (its mixer)
#   sndback_dom NAME       a driver domain whose main process is sndback, started once
#                          its backend dir is written (go file); prints the domid
#   sndback_go NAME GUEST DEVID   write go.NAME (its backend dir)
#   sndhostile_dom NAME SEED SECONDS   as sndback_dom, with a hostile backend (sndhostile,
#                          tests/frontends/sndhostile.c) for SECONDS; its output in
#                          $TEST_TMP/NAME.out (not a .log: its own sanitizer reports are not
#                          the frontend's)
#   snd_guest_alive        fail unless the guest running the frontend still runs
#   sndhostile_wait NAME SECS   until sndhostile in NAME has ended (at most SECS + 30 s),
#                          failing if the frontend dies meanwhile; it must have ended and
#                          said HOSTILE-OK in $TEST_TMP/NAME.out
#   vsnd_be_add GUEST DRV DEVID   only the backend dir (a new driver domain's)
#   replace_sndback OLD NEW GUEST   destroy OLD if it is there, start NEW with sndback and
#                          its backend dir, rewire the frontend dir in place; prints NEW's domid
#   snd_faults N PID BASE JITTER   N times: sleep BASE s plus up to JITTER tenths, fail
#                          unless PID (the program) still runs, replace the driver domain
#                          (drv0, drv1, ...: replace_sndback), wait until the card is
#                          live again; SND_GAPS gets each recovery's shadow/last-gap
#   attach_standby GUEST NAME SLOT   a hot standby (schema.md, "The hot standby's
#                          connection"): NAME started with sndback serving the slot
#                          FE/shadow/SLOT, the slot written with the card, FE/shadow/standby
#                          set; waits until the frontend holds it Connected; prints its domid
#   promote_standby OLD GUEST DOMID   fence OLD (pause), point the card at DOMID's backend
#                          (held in a slot), bump the generation, drop FE/shadow/standby,
#                          then destroy OLD in the background
#   sf_key GUEST KEY       a key of the card's frontend dir (empty if absent)
#   sf_live_n GUEST N      shadow/state live and shadow/recoveries >= N
#   snd_gaps               the recording's gaps, one "missing_frames stream_ms" a line
#   snd_sanitizer_check    fail on a sanitizer report in any $TEST_TMP/*.log

SNDFRONT=$BUILD/bin/understudy-sndfront
SND_PCM_SO=$BUILD/lib/libasound_module_pcm_understudy.so
SND_CTL_SO=$BUILD/lib/libasound_module_ctl_understudy.so
SOCK=$TEST_TMP/vsnd.sock

# The card for programs, beside the clocked test PCM: its PCM understudy (the
# shadow PCM, exact formats; plug:understudy through alsa-lib's converters) and
# its mixer understudy (the shadow mixer: amixer -D understudy).
snd_fe_asoundrc() {
    cat >>"$HOME/.asoundrc" <<EOF
pcm_type.understudy { lib "$SND_PCM_SO" }
pcm.understudy { type understudy; socket "$SOCK"; device 0 }
ctl_type.understudy { lib "$SND_CTL_SO" }
ctl.understudy { type understudy; socket "$SOCK" }
EOF
}

sndfront_dom() {
    local name=$1
    shift
    new_dom "$name" sh -c 'f=$1; shift; while [ ! -e "$f" ]; do sleep 0.02; done; exec "$@"' \
        sh "$TEST_TMP/go.$name" "$SNDFRONT" --device "device/vsnd/$DEV" --socket "$SOCK" "$@"
}

sndback_dom() {
    local name=$1
    new_dom "$name" sh -c \
        'f=$1; shift; while [ ! -s "$f" ]; do sleep 0.02; done; exec "$@" --backend "$(cat "$f")"' \
        sh "$TEST_TMP/go.$name" "$SNDBACK"
}
sndhostile_dom() {
    local name=$1
    "$XENSIM" create --name "$name" --log "$TEST_TMP/$name.out" -- sh -c \
        'f=$1; shift; while [ ! -s "$f" ]; do sleep 0.02; done; exec "$1" "$(cat "$f")" "$2" "$3"' \
        sh "$TEST_TMP/go.$name" "$TPROG/frontends/sndhostile" "$2" "$3"
}
snd_guest_alive() { "$XENSIM" info guest | grep -q state=running || fail "the frontend died: $(tail -5 "$TEST_TMP/guest.log")"; }
sndhostile_wait() {
    local name=$1 secs=$2 i
    for ((i = 0; i < (secs + 30) * 4; i++)); do
        snd_guest_alive
        "$XENSIM" info "$name" | grep -q state=running || break
        sleep 0.25
    done
    "$XENSIM" info "$name" | grep -q state=running && fail "sndhostile did not end"
    grep -q '^HOSTILE-OK' "$TEST_TMP/$name.out" ||
        fail "sndhostile did not finish: $(tail -3 "$TEST_TMP/$name.out")"
}
sndback_go() { vsnd_be "$(xensim_domid "$1")" "$2" "$3" >"$TEST_TMP/go.$1.tmp" && mv "$TEST_TMP/go.$1.tmp" "$TEST_TMP/go.$1"; }
xensim_domid() { "$XENSIM" info "$1" | sed -n 's/^domid=//p'; }

vsnd_be_add() {
    local g=$1 d=$2 dev=$3 be
    be=$(vsnd_be "$d" "$g" "$dev")
    xenstore-write "$be/frontend" "$(vsnd_fe "$g" "$dev")" "$be/frontend-id" "$g" \
        "$be/online" 1 "$be/state" 1 || fail "vsnd_be_add: writing $be"
    xenstore-chmod -r "$be" "n$d" "r$g" || fail "vsnd_be_add: chmod $be"
}

rewire_vsnd() {
    local g=$1 dev=$2 d=$3 fe gen
    fe=$(vsnd_fe "$g" "$dev")
    xenstore-write "$fe/backend" "$(vsnd_be "$d" "$g" "$dev")" "$fe/backend-id" "$d" ||
        fail "rewire: write $fe"
    xenstore-chmod -r "$fe" "n$g" "r$d" || fail "rewire: chmod $fe"
    gen=$(xenstore-read "$fe/shadow/generation" 2>/dev/null || echo 0)
    xenstore-write "$fe/shadow/generation" $((gen + 1)) || fail "rewire: bump generation"
}

replace_sndback() {
    local old=$1 new=$2 g=$3 d
    "$XENSIM" info "$old" >/dev/null 2>&1 && "$XENSIM" destroy "$old" >/dev/null
    d=$(sndback_dom "$new") || fail "replace_sndback: create $new"
    vsnd_be_add "$g" "$d" "$DEV"
    # The frontend dir readable by the new domain before its sndback reads it.
    rewire_vsnd "$g" "$DEV" "$d"
    sndback_go "$new" "$g" "$DEV"
    echo "$d"
}

snd_faults() {
    local n=$1 pid=$2 base=$3 jitter=$4 i
    SND_GAPS=()
    for ((i = 1; i <= n; i++)); do
        sleep "$(echo "$base + $((RANDOM % (jitter + 1))) / 10" | bc -l)"
        [ "$pid" = - ] || kill -0 "$pid" 2>/dev/null || fail "the program ended before fault $i"
        replace_sndback "drv$((i - 1))" "drv$i" "$guest" >/dev/null
        wait_for 10 sf_live_n "$guest" "$i"
        SND_GAPS+=("$(sf_key "$guest" shadow/last-gap)")
        log "fault $i: '$(sf_key "$guest" shadow/report)'; $(sf_key "$guest" shadow/last-recovery) gap=${SND_GAPS[-1]} ms"
    done
}

slot_connected() { [ "$(xenstore-read "$1/state" 2>/dev/null)" = 4 ]; }

attach_standby() {
    local g=$1 name=$2 slot=$3 d fe sd
    d=$(sndback_dom "$name") || fail "attach_standby: create $name"
    fe=$(vsnd_fe "$g" "$DEV")
    sd=$fe/shadow/$slot
    xenstore-rm "$sd" 2>/dev/null || true
    # The slot is a frontend dir of its own: the card written there as vsnd_add writes it in FE.
    VSND_FE=$sd vsnd_add "$g" "$d" "$DEV"
    sndback_go "$name" "$g" "$DEV"
    xenstore-write "$fe/shadow/standby" "$slot" || fail "attach_standby: write $fe/shadow/standby"
    wait_for 10 slot_connected "$sd"
    echo "$d"
}

promote_standby() {
    local old=$1 g=$2 d=$3 fe gen
    fe=$(vsnd_fe "$g" "$DEV")
    "$XENSIM" pause "$old" >/dev/null 2>&1 || true # fenced (or gone already)
    gen=$(xenstore-read "$fe/shadow/generation" 2>/dev/null || echo 0)
    xenstore-write "$fe/backend" "$(vsnd_be "$d" "$g" "$DEV")" "$fe/backend-id" "$d" ||
        fail "promote: write $fe"
    xenstore-write "$fe/shadow/generation" $((gen + 1)) || fail "promote: bump generation"
    xenstore-rm "$fe/shadow/standby" || fail "promote: remove $fe/shadow/standby"
    ("$XENSIM" destroy "$old" >/dev/null 2>&1 &)
}

sf_key() { xenstore-read "$(vsnd_fe "$1" "$DEV")/$2" 2>/dev/null || true; }
sf_live_n() {
    [ "$(sf_key "$1" shadow/state)" = live ] && [ "$(sf_key "$1" shadow/recoveries)" -ge "$2" ] 2>/dev/null
}

snd_fe_setup() {
    snd_setup
    # The capture side numbers its frames by the clock, across sndback restarts.
    snd_asoundrc "file \"$REC\" capture clock"
    [ -x "$SNDBACK" ] && [ -x "$SNDFRONT" ] && [ -f "$SND_PCM_SO" ] ||
        skip "sndback, understudy-sndfront or the shadow PCM not built (libasound2-dev missing?)"
    snd_fe_asoundrc
    start_sim
    on_exit '[ "$rc" -eq 0 ] || snd_dump_logs'
    guest=$(sndfront_dom guest "$@")
    drv=$("${SND_FE_DRV:-sndback_dom}" drv0)
    vsnd_add "$guest" "$drv" "$DEV"
    xenstore-write "$(vsnd_fe "$guest" "$DEV")/shadow/generation" 0
    sndback_go drv0 "$guest" "$DEV"
    touch "$TEST_TMP/go.guest"
    wait_for 10 sf_live_n "$guest" 0
}

# The recording's gaps as "missing stream_ms wall_ms" lines (sndcheck's gap lines).
snd_gaps() {
    grep '^gap ' <<<"$CHECK_OUT" | while read -r line; do
        echo "$(field "$line" missing) $(field "$line" stream_ms) $(field "$line" wall_ms)"
    done
}

snd_sanitizer_check() {
    local f
    for f in "$TEST_TMP"/*.log; do
        if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$f" 2>/dev/null; then
            echo "FAIL: sanitizer report in $f:" >&2
            grep -B2 -A30 -E 'Sanitizer|runtime error' "$f" | head -60 >&2
            exit 1
        fi
    done
}

snd_dump_logs() {
    local f
    for f in "$TEST_TMP"/*.log; do
        [ -f "$f" ] || continue
        echo "---- $(basename "$f") (last 30 lines)" >&2
        tail -n 30 "$f" | cut -c1-300 >&2
    done
}
