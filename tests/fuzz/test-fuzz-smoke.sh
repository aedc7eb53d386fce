#!/usr/bin/env bash
# Every fuzz target (fuzz/, built into $BUILD/fuzz by make test) runs briefly
# over its seed corpus, and replays every regression input in
# fuzz/regress/<target>/: a crash, a sanitizer report or a broken invariant
# fails the test. Skips, saying why, where clang's libFuzzer runtime is missing.
source "$(dirname "$0")/../functions.sh"
cd "$TOP"
SMOKE_SECONDS=${FUZZ_SMOKE_SECONDS:-2}
if [ ! -d "$BUILD/fuzz" ] || [ -z "$(ls "$BUILD/fuzz" 2>/dev/null | grep -v '^obj$')" ]; then
    command -v clang >/dev/null 2>&1 || skip "clang not installed (make deps installs clang and libclang-rt-14-dev)"
    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{\n(void)d;\n(void)n;\nreturn 0;\n}\n' |
        clang -x c - -fsanitize=fuzzer,address,undefined -o "$TEST_TMP/rt-check" >/dev/null 2>&1 ||
        skip "clang's libFuzzer runtime does not link (libclang-rt-14-dev; make deps installs it)"
    fail "no fuzz targets in $BUILD/fuzz although clang's fuzzer runtime links (make test builds them)"
fi
n=0
for src in fuzz/*.c; do
    t=$(basename "$src" .c)
    grep -q 'LLVMFuzzerTestOneInput(const uint8_t' "$src" || continue # helpers, not targets
    bin=$BUILD/fuzz/$t
    if [ ! -x "$bin" ] && [ "$t" = sndif_req ] && [ ! -f /usr/include/alsa/asoundlib.h ]; then
        log "$t: not built (no ALSA headers: libasound2-dev)"
        continue
    fi
    [ -x "$bin" ] || fail "fuzz target $t not built ($bin)"
    mkdir -p "$TEST_TMP/$t"
    log "$t: ${SMOKE_SECONDS}s over fuzz/corpus/$t"
    "$bin" -max_total_time="$SMOKE_SECONDS" -seed=1 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$TEST_TMP/$t-" "$TEST_TMP/$t" "fuzz/corpus/$t" >"$TEST_TMP/$t.log" 2>&1 ||
        { tail -n 40 "$TEST_TMP/$t.log"; fail "fuzz target $t crashed (its input: $(ls "$TEST_TMP/$t-"* 2>/dev/null))"; }
    grep -E '^stat::number_of_executed_units|^#[0-9]+ +DONE' "$TEST_TMP/$t.log" | sed "s/^/# $t: /"
    if [ -d "fuzz/regress/$t" ] && [ -n "$(ls "fuzz/regress/$t")" ]; then
        log "$t: replaying $(ls "fuzz/regress/$t" | wc -l) regression inputs"
        "$bin" -timeout=10 fuzz/regress/"$t"/* >"$TEST_TMP/$t-regress.log" 2>&1 ||
            { tail -n 40 "$TEST_TMP/$t-regress.log"; fail "fuzz target $t crashes on a regression input in fuzz/regress/$t"; }
    fi
    n=$((n + 1))
done
[ $n -gt 0 ] || fail "no fuzz targets found in fuzz/"
log "$n fuzz targets ran clean"
exit 0
