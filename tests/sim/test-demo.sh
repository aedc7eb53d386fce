#!/usr/bin/env bash
# make demo's script, end to end on this build: it finishes with exit 0, the
# workload saw no error, fsck was clean and every fsynced file was verified,
# the timeline has a row per fault with shadowd's and the frontend's phases,
# the closing table a SUCCESS row for each class (disk, network, sound);
# then, run again and stopped with SIGTERM mid-run, it exits 130 and leaves
# nothing behind (no temp dir, mount, loop device or domain process).
source "$(dirname "$0")/../functions.sh"
requires jq bc xenstore-read
DEMO=$TOP/scripts/demo
mkdir -p "$TEST_TMP/tmp"
export TMPDIR=$TEST_TMP/tmp

TMPDIR=$TEST_TMP/tmp "$DEMO" --build "$BUILD" --faults 3 --seconds 25 >"$TEST_TMP/demo.out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "demo exited $rc: $(grep -v '^\(nbdkit\|blkback\|shadowd\|understudy-agent\)' "$TEST_TMP/demo.out" | tail -40)"
out=$TEST_TMP/demo.out
grep -q '^  errors: 0' "$out" || fail "no 'errors: 0' line: $(tail -15 "$out")"
rows=$(sed -n '/^Timeline/,/^$/p' "$out" | grep -cE '^  [0-9]+ +[0-9.]+s +[0-9]+->[0-9]+ +\|.*\| detect=[0-9]+ reconnect=[0-9]+ replay=[0-9]+ total=[0-9]+$')
expect_eq "timeline rows" "$rows" 3
expect_eq "FAULT lines" "$(grep -c '] FAULT [0-9]' "$out")" 3
if grep -q '^\[.*NOTE: .*blkfe-driver' "$out"; then
    log "the demo used its fallback: $(grep -m1 NOTE "$out")"
    grep -q '^  DRIVER-OK' "$out" || fail "fallback: no DRIVER-OK"
else
    grep -q '^  fsck: clean through NBD and on the backing file' "$out" || fail "no fsck line"
    grep -qE '^  verified on the backing file: [1-9][0-9]* files' "$out" || fail "no verified files"
fi
grep -q 'done: the driver domain died 3 times' "$out" || fail "no closing line"
# The table: a row per class, each SUCCESS (a class left out says why).
for c in disk network sound; do
    grep -q "^\[.*\] $c: left out" "$out" && { log "$(grep -m1 "\] $c: left out" "$out")"; continue; }
    grep -qE "^  $c +.* SUCCESS " "$out" || fail "no SUCCESS row for $c: $(grep -A4 '^  class ' "$out")"
done
[ -z "$(ls -A "$TEST_TMP/tmp")" ] || fail "the demo left $(ls "$TEST_TMP/tmp")"
log "$(grep -E '^  (errors|verified)' "$out" | tr -s ' ' | tr '\n' ';')"

# Stopped mid-run: cleans up everything.
"$DEMO" --build "$BUILD" --faults 3 --seconds 25 >"$TEST_TMP/demo2.out" 2>&1 &
pid=$!
on_exit "kill -KILL $pid 2>/dev/null"
wait_for 60 grep -q '] FAULT 1' "$TEST_TMP/demo2.out"
d=$(ls -d "$TEST_TMP"/tmp/understudy-demo.* 2>/dev/null | head -1)
[ -n "$d" ] || fail "no demo temp dir while it runs"
kill -TERM "$pid"
wait "$pid"
rc=$?
expect_eq "exit status after SIGTERM" "$rc" 130
[ -z "$(ls -A "$TEST_TMP/tmp")" ] || fail "after SIGTERM the demo left $(ls "$TEST_TMP/tmp")"
grep -q "$d" /proc/mounts && fail "a mount under $d is left"
losetup -a | grep -q "$d" && fail "a loop device on $d is left"
pgrep -f "$d" >/dev/null && fail "processes of the demo are left: $(pgrep -af "$d")"
exit 0
