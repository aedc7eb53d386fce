#!/usr/bin/env bash
# The data-path matrix's instruments off Xen (make test; the matrix itself
# runs them in guests, scenario-matrix): blk-jobs runs its eight jobs on a
# file and reports each with no error; net-jobs runs its three jobs over
# loopback, every byte the client sent counted by the server; both refuse bad
# arguments with a message, and report a missing device or server as errors.
source "$(dirname "$0")/../functions.sh"
BJ=$TPROG/system/blk-jobs NJ=$TPROG/system/net-jobs
[ -x "$BJ" ] && [ -x "$NJ" ] || fail "blk-jobs or net-jobs not built in $BUILD"

# ---- blk-jobs ----
truncate -s 8M "$TEST_TMP/disk.img"
out=$("$BJ" "$TEST_TMP/disk.img" 1 4) || fail "blk-jobs on a file failed: $out"
expect_eq "blk-jobs start" "$(grep -c '^MX start dev=.* secs=1 region_mib=4$' <<<"$out")" 1
expect_eq "blk-jobs jobs" "$(grep -c '^MX job=' <<<"$out")" 8
expect_eq "blk-jobs jobs with errors" "$(grep '^MX job=' <<<"$out" | grep -vc ' errors=0')" 0
for j in "seqwrite bs=1048576 qd=1" "seqwrite bs=1048576 qd=16" "seqread bs=1048576 qd=16" \
    "randwrite bs=4096 qd=16" "randread bs=4096 qd=1"; do
    grep -q "^MX job=$j ops=[1-9]" <<<"$out" || fail "blk-jobs: no '$j' job with ops: $out"
done
grep -q '^MX done errors=0$' <<<"$out" || fail "blk-jobs: no clean done line: $out"
# a region past the end is cut to the device: 64 MiB asked of 8 is 8
"$BJ" "$TEST_TMP/disk.img" 1 64 | grep -q '^MX start .* region_mib=8$' || fail "blk-jobs: region not cut to the file"
for bad in "1" "$TEST_TMP/disk.img 0" "$TEST_TMP/disk.img x" "$TEST_TMP/disk.img 1 0"; do
    # shellcheck disable=SC2086
    err=$("$BJ" $bad 2>&1 >/dev/null) && fail "blk-jobs accepted '$bad'"
    [ -n "$err" ] || fail "blk-jobs refused '$bad' without a message"
done
err=$("$BJ" "$TEST_TMP/none" 1 2>&1) && fail "blk-jobs ran on a missing device"
grep -q 'No such file' <<<"$err" || fail "blk-jobs: missing device: '$err'"

# ---- net-jobs ----
port=$((20000 + RANDOM % 20000))
"$NJ" serve "$port" 2>"$TEST_TMP/serve.err" &
srv=$!
on_exit "kill $srv 2>/dev/null"
wait_for 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" # listening
out=$("$NJ" client 127.0.0.1 "$port" 1) || fail "net-jobs over loopback failed: $out $(cat "$TEST_TMP/serve.err")"
for j in tcp_send tcp_recv; do
    grep -q "^NX job=$j bytes=[1-9][0-9]* .* errors=0$" <<<"$out" || fail "net-jobs: $j: $out"
done
grep -q '^NX job=udp_rr trans=[1-9][0-9]* .* lost=[0-9]* errors=0$' <<<"$out" || fail "net-jobs: udp_rr: $out"
grep -q '^NX done errors=0$' <<<"$out" || fail "net-jobs: no clean done line: $out"
kill "$srv"
wait "$srv" 2>/dev/null
# no server: every job is an error, and the exit status says so
out=$("$NJ" client 127.0.0.1 "$port" 1) && fail "net-jobs passed with no server: $out"
grep -q '^NX done errors=3$' <<<"$out" || fail "net-jobs with no server: $out"
for bad in "serve 0" "serve x" "client 127.0.0.1 $port 0" "client nohost $port 1" "client 127.0.0.1 70000 1"; do
    # shellcheck disable=SC2086
    err=$("$NJ" $bad 2>&1 >/dev/null) && fail "net-jobs accepted '$bad'"
    [ -n "$err" ] || fail "net-jobs refused '$bad' without a message"
done
log "blk-jobs: 8 jobs on a file; net-jobs: 3 jobs over loopback; bad arguments refused"
