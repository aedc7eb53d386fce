# shellcheck shell=bash
# tests/campaign/disk-database.sh - the disk row "database", sourced by
# disk-cell.sh once ext4 is mounted at $mnt (verdict, run_rounds,
# remount_checked and cut_device are there; README.md has the rules).
#
# Debian's PostgreSQL (15 on bookworm; 15 or later: pgbench --max-tries),
# its binaries in PGBIN run directly (not the system cluster): a cluster
# initialised on the shadowed ext4, run as the postgres user, its socket in a
# private directory, no TCP; fsync, full_page_writes and synchronous_commit
# on (the defaults, said again), shared_buffers small so that pages go out
# to the disk. pgbench -i, then for SECS s round after round of pgbench's
# TPC-B-like transaction (PG_CLIENTS clients, PG_TX transactions each), no
# retries (--max-tries=1: a failed transaction fails the run), every
# transaction logged by pgbench (--log). The script is pgbench's own
# tpcb-like but for the history row's filler, which names the transaction:
# "r<round> c<client> n<its number>".
#
# The ledger: every transaction adds its delta to one account, teller and
# branch and inserts one history row. After the program postgres is shut
# down (fast: a checkpoint), the file system checked and mounted afresh
# (remount_checked), postgres started again on it (crash recovery if it has
# to), and then: pg_amcheck clean on every table and btree index of the
# database (the catalogs too; the heap against the indexes, parent/child);
# the accounts, tellers and branches still all there; sum(abalance) =
# sum(tbalance) = sum(bbalance) = sum(delta) of the history; and the
# history's rows exactly the transactions pgbench logged as committed - none
# missing, none extra, none twice.
# CRASH: pgbench failed (a transaction failed, a connection was lost) or was
# killed; postgres exited, crashed (a PANIC: it restarts itself, but every
# client lost its connection) or did not shut down. MALFUNCTION: fsck finds
# damage, postgres does not start again from the disk, amcheck finds
# corruption, a row or a committed transaction is missing, the sums differ,
# or a stall: a transaction took over PG_STALL_S (its latency in pgbench's
# log: a client made no progress that long) or a round over STALL_S.
# SUCCESS: none of that.
# (PGBIN, and that it holds what is needed: disk-cell.sh, before the set-up.)
# A round: PG_CLIENTS clients, PG_TX transactions each (about a second
# without a fault). Scale 2: 200,000 accounts (about 30 MB).
PG_CLIENTS=${PG_CLIENTS:-2} PG_TX=${PG_TX:-50} PG_SCALE=${PG_SCALE:-2}
# A transaction waits on at most a recovery or two (a recrash) and the
# frontend's 1 s deadline: a few seconds. (A round may hold several faults:
# STALL_S, disk-cell.sh, is the looser bound.)
PG_STALL_S=${PG_STALL_S:-10}
pgdata=$mnt/pgdata
pgsock=$TEST_TMP/pgsock
pglog=$TEST_TMP/pglog
export PGHOST=$pgsock PGUSER=postgres PGDATABASE=postgres
pm=

# postgres refuses to run as root: the cluster is the postgres user's. It
# must get through TEST_TMP (mktemp's 0700) to the mount. (An array, not a
# function: started in the background, $! must be the postmaster's pid.)
as_pg=(setpriv --reuid=postgres --regid=postgres --init-groups --)
chmod o+x "$TEST_TMP"
mkdir -p "$pgdata" "$pgsock" "$pglog"
chown postgres:postgres "$pgdata" "$pgsock"
chmod 700 "$pgdata" "$pgsock"

# The postmaster is still running (it is our child: a zombie is not).
pg_alive() { [ -n "$pm" ] && [ -e "/proc/$pm" ] && [ "$(awk '{print $3}' "/proc/$pm/stat" 2>/dev/null)" != Z ]; }
# pg_start: the postmaster on $pgdata, ready for connections within 60 s;
# 1 if it exits or is not ready (its log: $TEST_TMP/postgres.log).
pg_start() {
    local i
    "${as_pg[@]}" "$PGBIN/postgres" -D "$pgdata" -c listen_addresses= -c unix_socket_directories="$pgsock" \
        -c max_connections=10 -c shared_buffers=2MB -c max_wal_size=48MB -c min_wal_size=32MB \
        -c fsync=on -c full_page_writes=on -c synchronous_commit=on >>"$TEST_TMP/postgres.log" 2>&1 &
    pm=$!
    for ((i = 0; i < 300; i++)); do
        "$PGBIN/pg_isready" -q -t 2 && return 0
        pg_alive || return 1
        sleep 0.2
    done
    return 1
}
# pg_stop: a fast shutdown (a checkpoint, every backend told to go), 30 s at
# most; 0 if the postmaster exited 0.
pg_stop() {
    local i
    pg_alive || return 1
    kill -INT "$pm"
    for ((i = 0; i < 300; i++)); do
        pg_alive || break
        sleep 0.1
    done
    pg_alive && return 1
    wait "$pm"
    local st=$?
    pm=
    return $st
}
# pg_kill: every process of the cluster killed (the cell's exit, and a
# postgres that would not stop). Its children run in sessions of their own:
# the postmaster is stopped first so that it starts no more, and they are
# killed by pid. One stuck on a dead device (the none column) goes once
# the device is cut off.
pg_kill() {
    local pids i
    pg_alive || { [ -z "$pm" ] || wait "$pm" 2>/dev/null; pm=; return 0; }
    kill -STOP "$pm"
    pids=$({ echo "$pm"; pgrep -P "$pm"; } | paste -sd,) # "PID,PID,..."
    { # (not bash's "Killed" notice in the cell's log)
        # shellcheck disable=SC2086
        kill -KILL ${pids//,/ }
        for ((i = 0; i < 200; i++)); do
            ps -o stat= -p "$pids" | grep -qv Z || break
            [ $i = 50 ] && cut_device # 5 s: stuck on the device
            sleep 0.1
        done
        wait "$pm"
    } 2>/dev/null
    pm=
}
on_exit pg_kill
# For the cell's log: what postgres said that was not routine.
pg_excerpt() {
    [ -s "$TEST_TMP/postgres.log" ] || return 0
    echo "# postgres.log, its warnings, errors and recoveries:"
    grep -E 'WARNING|ERROR|FATAL|PANIC|terminat|reinitializ|redo|recover' "$TEST_TMP/postgres.log" | head -n 30 | sed 's/^/#   /'
}
on_exit pg_excerpt
# pg_said [CHARS [LINE]]: what postgres' log (from LINE) says went wrong -
# its first PANIC, FATAL or ERROR lines, else its last lines - without the
# time stamps.
pg_said() {
    tail -n +"${2:-1}" "$TEST_TMP/postgres.log" >"$TEST_TMP/postgres.tail"
    { grep -m2 -E '(PANIC|FATAL|ERROR):' "$TEST_TMP/postgres.tail" || tail -n 2 "$TEST_TMP/postgres.tail"; } |
        sed 's/^[-0-9]* [0-9:.]* [A-Z]* \[[0-9]*\] //' | tr '\n' ' ' | cut -c1-"${1:-300}"
}

"${as_pg[@]}" "$PGBIN/initdb" -D "$pgdata" --auth=trust -U postgres -E UTF8 --locale=C --no-instructions \
    >"$TEST_TMP/initdb.log" 2>&1 || fail "initdb on the shadowed disk: $(tail -n 3 "$TEST_TMP/initdb.log")"
pg_start || fail "postgres does not start: $(pg_said)"
"$PGBIN/pgbench" -i -q -s "$PG_SCALE" >"$TEST_TMP/pgbench-init.log" 2>&1 ||
    fail "pgbench -i: $(tail -n 3 "$TEST_TMP/pgbench-init.log")"
"$PGBIN/psql" -qAtc CHECKPOINT >/dev/null || fail "checkpoint after pgbench -i"
log "postgres on the shadowed ext4 ($pgdata), pgbench -i -s $PG_SCALE: $(grep -o 'done in [0-9.]* s' "$TEST_TMP/pgbench-init.log")"

# pgbench's tpcb-like, the history row naming the transaction (n counts a
# client's transactions: pgbench keeps a client's variables from one to the
# next).
ledger=$TEST_TMP/ledger.sql
cat >"$ledger" <<'EOF'
\set n :n + 1
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime, filler)
    VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP, 'r' || :r || ' c' || :client_id || ' n' || :n);
END;
EOF
# Round K: pgbench's log of it in $pglog/rK.<pid>.
transactions() {
    (cd "$pglog" && "$PGBIN/pgbench" -n -c "$PG_CLIENTS" -j 1 -t "$PG_TX" -s "$PG_SCALE" --max-tries=1 \
        -D r="$1" -D n=0 -f "$ledger" --log --log-prefix="r$1") >"$TEST_TMP/pgbench.out" 2>&1
    local st=$?
    cat "$TEST_TMP/pgbench.out" >>"$TEST_TMP/pgbench.log"
    # (run_rounds quotes the last 300 characters.)
    [ $st = 0 ] || {
        echo "round $1: pgbench exited $st: $(grep -m1 'error:' "$TEST_TMP/pgbench.out" | cut -c1-90); postgres: $(pg_said 170)" >&2
        return 1
    }
}
# A round may end after SECS: STALL_S more at most.
run_rounds transactions $((SECS + STALL_S)) database
# The program is pgbench and the server: a server that died, or will not
# shut down, failed too.
pg_alive || verdict CRASH "postgres exited after $rounds rounds: $(pg_said)"
# A server process that crashed between rounds (no client saw it): postgres
# restarted itself (restart_after_crash), but it crashed.
! grep -q 'terminating any other active server processes\|all server processes terminated' "$TEST_TMP/postgres.log" ||
    verdict CRASH "postgres crashed and restarted itself: $(pg_said)"
pg_stop || { pg_kill; verdict CRASH "postgres did not shut down cleanly (a fast shutdown, 30 s): $(pg_said)"; }

log "$rounds rounds; tps (pgbench's, per round) $(grep -o '^tps = [0-9]*' "$TEST_TMP/pgbench.log" | awk '{print $3}' | sort -n | awk '{a[NR] = $1} END {print "min " a[1] ", median " a[int((NR + 1) / 2)] ", max " a[NR]}')"

# The judge: what pgbench saw committed, counted from its logs ("client
# transaction time ...": the client's transactions counted from 1, as the
# script's n; time is the latency in us, or "failed"/"skipped").
for f in "$pglog"/r*; do
    k=${f##*/r}
    awk -v k="${k%%.*}" '$3 ~ /^[0-9]+$/ { print "r" k " c" $1 " n" $2 }' "$f"
done | LC_ALL=C sort >"$TEST_TMP/committed.txt"
committed=$(wc -l <"$TEST_TMP/committed.txt")
# Every round exited 0: every transaction of it committed, and logged.
[ "$committed" = $((rounds * PG_CLIENTS * PG_TX)) ] ||
    fail "pgbench's logs hold $committed committed transactions, $rounds rounds made $((rounds * PG_CLIENTS * PG_TX))"
# The slowest transaction (its latency, us): "US rROUND client C transaction N".
slowtx=$(for f in "$pglog"/r*; do
    k=${f##*/r}
    awk -v k="${k%%.*}" '$3 ~ /^[0-9]+$/ { print $3, "r" k, "client", $1, "transaction", $2 }' "$f"
done | sort -n | tail -n 1)
read -r slow_us slow_r _ slow_c _ slow_n <<<"$slowtx"
[ "$slow_us" -le $((PG_STALL_S * 1000000)) ] ||
    verdict MALFUNCTION "a stall: transaction $slow_n of client $slow_c in round ${slow_r#r} took $((slow_us / 1000)) ms"

remount_checked
started=$(($(wc -l <"$TEST_TMP/postgres.log") + 1))
pg_start || verdict MALFUNCTION "postgres does not start again on the file system mounted afresh: $(pg_said 300 "$started")"
recovery=$(tail -n +"$started" "$TEST_TMP/postgres.log" | grep -c 'not properly shut down')
"$PGBIN/pg_amcheck" -d postgres --install-missing --heapallindexed --parent-check --rootdescend --progress \
    >"$TEST_TMP/amcheck.out" 2>&1 ||
    verdict MALFUNCTION "pg_amcheck: $(grep -v '^ *[0-9]*/[0-9]* relations\|NOTICE' "$TEST_TMP/amcheck.out" | head -n 4 | tr '\n' ' ' | cut -c1-400)"
relations=$(tr '\r' '\n' <"$TEST_TMP/amcheck.out" | sed -n 's|^ *\([0-9]*\)/\1 relations.*|\1|p' | tail -n 1)
q() { "$PGBIN/psql" -XqAt -v ON_ERROR_STOP=1 -F ' ' -c "$1"; }
rows=$(q "SELECT (SELECT count(*) FROM pgbench_accounts), (SELECT count(*) FROM pgbench_tellers),
                 (SELECT count(*) FROM pgbench_branches)") || verdict MALFUNCTION "the tables do not read back"
[ "$rows" = "$((100000 * PG_SCALE)) $((10 * PG_SCALE)) $PG_SCALE" ] ||
    verdict MALFUNCTION "accounts, tellers, branches: $rows rows, pgbench -i made $((100000 * PG_SCALE)) $((10 * PG_SCALE)) $PG_SCALE"
sums=$(q "SELECT (SELECT sum(abalance) FROM pgbench_accounts), (SELECT sum(tbalance) FROM pgbench_tellers),
                 (SELECT sum(bbalance) FROM pgbench_branches), (SELECT coalesce(sum(delta), 0) FROM pgbench_history)") ||
    verdict MALFUNCTION "the ledger does not read back"
read -r sa st sb sh <<<"$sums"
[ "$sa" = "$st" ] && [ "$st" = "$sb" ] && [ "$sb" = "$sh" ] ||
    verdict MALFUNCTION "the ledger does not add up: sum(abalance) $sa, sum(tbalance) $st, sum(bbalance) $sb, sum(delta) of the history $sh"
q "SELECT rtrim(filler) FROM pgbench_history" >"$TEST_TMP/history.raw" ||
    verdict MALFUNCTION "the history does not read back"
LC_ALL=C sort "$TEST_TMP/history.raw" >"$TEST_TMP/history.txt"
lost=$(LC_ALL=C comm -23 "$TEST_TMP/committed.txt" "$TEST_TMP/history.txt" | wc -l)
extra=$(LC_ALL=C comm -13 "$TEST_TMP/committed.txt" "$TEST_TMP/history.txt" | wc -l)
[ "$lost" = 0 ] && [ "$extra" = 0 ] ||
    verdict MALFUNCTION "$lost committed transactions missing from the history (first: $(LC_ALL=C comm -23 "$TEST_TMP/committed.txt" "$TEST_TMP/history.txt" | head -n 1)), $extra rows there that no committed transaction made (first: $(LC_ALL=C comm -13 "$TEST_TMP/committed.txt" "$TEST_TMP/history.txt" | head -n 1)) - $committed committed, $(wc -l <"$TEST_TMP/history.txt") rows"
pg_stop || verdict MALFUNCTION "postgres did not shut down cleanly after the check: $(pg_said 300 "$started")"
verdict SUCCESS "$rounds rounds of pgbench, $committed transactions committed and every one in the history once, the sums equal ($sa); pg_amcheck clean ($relations relations); the slowest transaction $((slow_us / 1000)) ms, round $slowest ms; fsck clean; $([ "$recovery" = 0 ] && echo "restarted without" || echo "restarted after") crash recovery"
