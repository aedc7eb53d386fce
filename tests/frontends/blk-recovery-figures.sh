#!/usr/bin/env bash
# blk-recovery-figures.sh hot|cold [FAULTS] - not a test (run-tests runs test-*.sh): the
# shadow blkfront's own recovery phases (shadow/last-recovery: detect, reconnect, replay,
# total) over FAULTS faults (default 20), with the stand-in toolstack of the tests, for
# the README's figures. Each fault: the verifying workload of test-blkfront-hot-standby
# (blkfe-driver, 4 threads, blkback with a volatile cache) runs, the serving domain is
# crashed with requests in flight, and
#   hot:  the standby held in a slot is promoted (pause, FE/backend, generation), then a
#         fresh one attached in the other slot (after the recovery, not timed);
#   cold: a fresh blkback domain is created and the device rewired to it (destroy, create,
#         rewire: next_backend, as test-blkfront-kill-rewire does).
# Prints one line per fault and "FIGURES <mode> <phase> p50=<ms> p99=<ms> (n=N)" per phase
# (nearest rank: the p99 of 20 is the largest). Run it as the tests run:
#   BUILD=build/rel TEST_TMP=$(mktemp -d) tests/frontends/blk-recovery-figures.sh hot 20
MODE=${1:?hot or cold}
FAULTS=${2:-20}
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/rewire-functions.sh"
source "$(dirname "$0")/blk-standby-functions.sh"
[ "$MODE" = hot ] || [ "$MODE" = cold ] || fail "mode: hot or cold, not $MODE"
[ -x "$BUILD/bin/blkback" ] || fail "blkback not built in $BUILD"
export BLK_BACKEND=$BUILD/bin/blkback
driver_setup 64 --seconds $((10 + FAULTS * 3)) --threads 4 --region-mib 16 --flush-every 100 \
    --deadline-ms 2000 --seed 31 -- cache=volatile
[ "$MODE" = hot ] && attach_standby drv1 slot-a
slot=slot-a next=slot-b n=1
: >"$TEST_TMP/phases"
for ((i = 1; i <= FAULTS; i++)); do
    progress_after $((i * 2 + 1))
    "$XENSIM" crash "$cur" >/dev/null || fail "xensim crash $cur"
    if [ "$MODE" = hot ]; then
        promote_standby "$cur" "$sb"
        cur=$sb_name drv=$sb
    else
        next_backend
    fi
    live_again "$i"
    rec=$(fe_key "$guest" "$DEV" shadow/last-recovery)
    echo "$rec" >>"$TEST_TMP/phases"
    echo "fault $i ($MODE): $rec"
    if [ "$MODE" = hot ]; then
        n=$((n + 1))
        attach_standby "drv$n" "$next"
        t=$slot slot=$next next=$t
    fi
done
driver_done $((FAULTS * 3 + 60))
for phase in detect reconnect replay total; do
    sed -n "s/.*\\b$phase=\\([0-9]*\\).*/\\1/p" "$TEST_TMP/phases" | sort -n |
        awk -v m="$MODE" -v p="$phase" '{v[NR] = $1}
            END {i50 = int((NR + 1) / 2); i99 = int(NR * 0.99 + 0.999); if (i99 > NR) i99 = NR;
                 if (i99 < 1) i99 = 1;
                 printf "FIGURES %s %s p50=%d p99=%d (n=%d)\n", m, p, v[i50], v[i99], NR}'
done
