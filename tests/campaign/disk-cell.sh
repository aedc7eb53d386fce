#!/usr/bin/env bash
# disk-cell.sh - one disk row of the application table in one column, on
# xensim (run by run-campaign; README.md there has the rules).
#
# Setup, as in tests/sim/test-disk-campaign.sh: shadowd keeps a driver domain
# "drv" running understudy-agent with blkback (cache=volatile: a kill throws
# away every unflushed acknowledged write); a guest runs nbdkit with the
# shadow blkfront plugin; nbdfuse and a loop device carry ext4 on its export,
# mounted at $mnt, where the program works. Rows:
#   encoder   for SECS s, round after round: a 30 s WAV (its tones chosen by
#             the round) copied onto the disk, lame encodes it to an mp3 on
#             the disk, the mp3 synced; the last 40 rounds' mp3s kept. After
#             the program, the file system is mounted afresh and every mp3
#             must be bit for bit lame's encode of the same WAV off the disk
#   compiler  for SECS s, round after round: a real third-party C project,
#             zlib (Debian's source package's upstream tarball, which make
#             deps fetches), unpacked onto the disk and built there as a user
#             would - configure, make -j2 - and its own tests run (make test:
#             both must say OK); the tree hashed and synced; the last 4 kept.
#             After the program every kept tree must read back the same from
#             the file system mounted afresh, and its example must run
#   database  Debian's PostgreSQL (15) with its cluster on the disk: pgbench
#             -i, then for SECS s round after round of pgbench's TPC-B-like
#             transactions, each logged by pgbench; after the program
#             postgres shut down, the file system mounted afresh, postgres
#             started on it again: pg_amcheck clean, and the ledger - the
#             balances' sums equal the history's, whose rows are exactly the
#             committed transactions (disk-database.sh)
# Columns: shadow (the plugin as shipped), restart (shadow=restart: at a
# fault outstanding requests fail with EIO, as a stock blkfront that
# restarts), none (shadowd stops once the domain is up).
# Verdicts (README.md): CRASH - the program failed or had to be killed;
# MALFUNCTION - it exited 0 but the file system is damaged (fsck through the
# device after the run), an output is not the reference's or not what was
# written (the database: amcheck, the ledger), or a round took longer than
# STALL_S (a stall); SUCCESS otherwise.
# usage: disk-cell.sh ROW COLUMN   (environment: campaign-lib.sh)
ROW=$1 COLUMN=$2
. "$(dirname "$0")/../functions.sh"
. "$(dirname "$0")/../frontends/rewire-functions.sh"
private_mounts "$@"
DISK_DOM=drv
. "$(dirname "$0")/../sim/disk-functions.sh"
. "$(dirname "$0")/campaign-lib.sh"
requires jq lame sox cmp sha256sum
# STALL_S: a round may take this long at most - the frontend's deadline
# (1 s), a recovery, and the round's own time, with faults 0.9 s apart (set
# per row below).
STALL_S=${STALL_S:-}
PARGS=(deadline-ms=1000)
case $COLUMN in
shadow | none) ;;
restart) PARGS+=(shadow=restart) ;;
*) fail "unknown column $COLUMN" ;;
esac
case $ROW in
encoder) ;;
compiler)
    requires make gcc tar bzip2
    ZLIB_TAR=${UNDERSTUDY_SRC:-/var/cache/understudy/src}/zlib_1.2.13.dfsg.orig.tar.bz2
    [ -f "$ZLIB_TAR" ] || skip "no $ZLIB_TAR (make deps fetches it: scripts/fetch-sources)"
    STALL_S=${STALL_S:-40} # a round is a whole build: 5-10 s here without a fault
    ;;
database)
    # Debian's PostgreSQL (15 on bookworm): its newest version installed.
    PGBIN=${PGBIN:-$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -n 1)}
    for p in initdb postgres pgbench psql pg_isready pg_amcheck; do
        [ -x "$PGBIN/$p" ] || skip "no PostgreSQL's $p in /usr/lib/postgresql/*/bin (make deps installs postgresql)"
    done
    id postgres >/dev/null 2>&1 || skip "no postgres user (make deps installs postgresql)"
    requires setpriv pgrep paste comm
    # A round is 2 x 50 transactions: a second or so without a fault, and
    # may hold several recoveries (a transaction: PG_STALL_S, 10 s).
    STALL_S=${STALL_S:-20}
    ;;
*) fail "unknown row $ROW" ;;
esac

STALL_S=${STALL_S:-10} # the encoder: a round is a second or two without a fault
disk_setup volatile "${PARGS[@]}"
# What the device moved, read and written (the plot's series: cmp_series).
cmp_counter() { awk '{ print ($3 + $7) * 512 }' "/sys/block/${loopdev#/dev/}/stat"; }
CMP_FE=$(fe_dir "$guest" "$DEV")
# No recovery: shadowd, having started the domain, stops; nothing restarts it.
[ "$COLUMN" = none ] && sd_stop
# A dead device (the none column) holds I/O for ever: what was not answered
# is cut off by killing nbdfuse first (FUSE then fails it), so that no
# process is left waiting on the device and the mounts can go.
CMP_BEFORE_KILL=cut_device
cut_device() {
    kill -KILL "$fuse_pid" 2>/dev/null
    umount -l "$mnt" 2>/dev/null
    [ -n "${loopdev:-}" ] && losetup -d "$loopdev" 2>/dev/null
    loopdev=
    umount -l "$fuse" 2>/dev/null
}

# What the frontend failed (the restart column: requests failed with EIO at
# each fault, and while there was no backend), for the verdict's reason.
failed_note() {
    local n m
    [ "$COLUMN" = restart ] || return 0
    n=$(grep -o 'restart only: [0-9]* requests failed' "$TEST_TMP/guest.log" 2>/dev/null | awk '{s += $3} END {print s + 0}')
    m=$(grep -o 'restart only: [0-9]* requests made while' "$TEST_TMP/guest.log" 2>/dev/null | awk '{s += $3} END {print s + 0}')
    echo "; the frontend failed $n outstanding requests and $m made while there was no backend with EIO"
}
verdict() {
    cmp_cell "$1" "$2$(failed_note)"
    exit 0
}

# Rounds of a row's work for SECS s: ROUND K does round K (non-zero: the
# program failed); each round's time goes to rounds.txt, "K MS".
rounds_loop() {
    local k=0 t0 s
    t0=$(date +%s)
    while [ $(($(date +%s) - t0)) -lt "$SECS" ]; do
        s=${EPOCHREALTIME/./}
        "$1" "$k" || return 1
        echo "$k $(((${EPOCHREALTIME/./} - s) / 1000))" >>"$TEST_TMP/rounds.txt"
        k=$((k + 1))
    done
}
# run_rounds ROUND SECS WHAT: the program (rounds_loop ROUND, in its own
# process group: cmp_run_timed kills all of it) under the cell's faults, given
# SECS to finish; CRASH if it failed or finished no round, MALFUNCTION if a
# round took over STALL_S. Sets rounds and slowest (ms).
run_rounds() {
    : >"$TEST_TMP/rounds.txt"
    PROG_T0=$(cmp_now_ms)
    set -m
    rounds_loop "$1" 2>"$TEST_TMP/prog.err" &
    pid=$!
    set +m
    sleep 1
    cmp_faults $pid 0.9 15
    cmp_run_timed $pid "$2" || verdict CRASH "the $3 exited $?: $(tail -c 300 "$TEST_TMP/prog.err")"
    rounds=$(wc -l <"$TEST_TMP/rounds.txt")
    [ "$rounds" -gt 0 ] || verdict CRASH "no round finished"
    local slow
    slow=$(awk -v lim=$((STALL_S * 1000)) '$2 > lim { print "round " $1 " took " $2 " ms"; exit }' "$TEST_TMP/rounds.txt")
    [ -z "$slow" ] || verdict MALFUNCTION "a stall: $slow"
    slowest=$(sort -k2 -n "$TEST_TMP/rounds.txt" | tail -n 1 | awk '{print $2}')
}

# The judge's first steps, for every row: the file system afresh (nothing
# from the page cache), fsck through the device, mounted again.
remount_checked() {
    umount "$mnt" || verdict MALFUNCTION "umount: the file system is busy or broken"
    fsck.ext4 -fn "$loopdev" >"$TEST_TMP/fsck.out" 2>&1 ||
        verdict MALFUNCTION "fsck through the device: $(grep -v '^e2fsck\|^Pass' "$TEST_TMP/fsck.out" | head -c 300)"
    mount -t ext4 "$loopdev" "$mnt" || verdict MALFUNCTION "the file system does not mount again"
}

if [ "$ROW" = compiler ]; then
    # Round after round, a user's build of zlib on the disk: unpack,
    # configure, make -j2, make test (its own tests: example and minigzip,
    # static and shared); then every file of the tree is hashed and the
    # tree synced. The last KEEP trees stay.
    KEEP=4
    build() {
        local d=$mnt/b$(($1 % KEEP))
        rm -rf "$d" && mkdir "$d" && tar -xjf "$ZLIB_TAR" -C "$d" &&
            (cd "$d"/zlib-* && ./configure && make -j2 && make test) >"$TEST_TMP/build.log" 2>&1 ||
            { tail -n 5 "$TEST_TMP/build.log" >&2; return 1; }
        [ "$(grep -c '\*\*\* zlib .*test OK \*\*\*' "$TEST_TMP/build.log")" -ge 2 ] ||
            { echo "round $1: zlib's tests did not say OK" >&2; return 1; }
        (cd "$d" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$TEST_TMP/tree$(($1 % KEEP)).sha" &&
            sync -f "$d"
    }
    # A round may finish after SECS: 40 s more at most.
    run_rounds build $((SECS + 40)) build
    remount_checked
    for ((k = rounds > KEEP ? rounds - KEEP : 0; k < rounds; k++)); do
        (cd "$mnt/b$((k % KEEP))" && sha256sum --quiet -c "$TEST_TMP/tree$((k % KEEP)).sha") >"$TEST_TMP/sha.out" 2>&1 ||
            verdict MALFUNCTION "round $k's built tree read back differs: $(head -n 3 "$TEST_TMP/sha.out" | tr '\n' ' ')"
        # What was built still runs, off the file system mounted afresh.
        (cd "$mnt/b$((k % KEEP))"/zlib-* && ./example >/dev/null) ||
            verdict MALFUNCTION "round $k's example does not run from the disk"
    done
    verdict SUCCESS "$rounds builds of zlib, its tests passing, the slowest $slowest ms; $((rounds < KEEP ? rounds : KEEP)) trees read back the same and run; fsck clean"
fi

# The database row: its set-up, program and judge; it ends in a verdict.
[ "$ROW" = database ] && . "$(dirname "$0")/disk-database.sh"

# The WAV of round K (deterministic: no dither), into FILE.
wav_of() { sox -D -n -r 44100 -c 2 -b 16 "$2" synth 30 sine $((200 + $1 * 37 % 900)) sine $((330 + $1 * 53 % 1200)) vol 0.5; }
KEEP=40
encode() {
    wav_of "$1" "$TEST_TMP/src.wav" && cp "$TEST_TMP/src.wav" "$mnt/in.wav" &&
        lame --quiet "$mnt/in.wav" "$mnt/out$(($1 % KEEP)).mp3" && sync "$mnt/out$(($1 % KEEP)).mp3"
}
run_rounds encode "$SECS" encoder

# The judge: every kept mp3 against lame's encode off the disk.
remount_checked
bad=
for ((k = rounds > KEEP ? rounds - KEEP : 0; k < rounds; k++)); do
    wav_of "$k" "$TEST_TMP/ref.wav" && lame --quiet "$TEST_TMP/ref.wav" "$TEST_TMP/ref.mp3" || fail "reference encode"
    cmp -s "$TEST_TMP/ref.mp3" "$mnt/out$((k % KEEP)).mp3" || { bad="round $k's mp3 is not lame's encode"; break; }
done
[ -z "$bad" ] || verdict MALFUNCTION "$bad"
verdict SUCCESS "$rounds rounds, the slowest $slowest ms; $((rounds < KEEP ? rounds : KEEP)) mp3s bit for bit; fsck clean"
