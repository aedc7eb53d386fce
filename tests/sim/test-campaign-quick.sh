#!/usr/bin/env bash
# The application table's quick run (tests/campaign): the four sound rows in
# the shadow column, two faults each, must all be SUCCESS; the mp3 row with
# no recovery, with faults that take the domain down, must not be (the judge
# sees the audio that never came back).
source "$(dirname "$0")/../functions.sh"
requires jq
out=$TEST_TMP/campaign
./tests/campaign/run-campaign --build "$BUILD" --quick --columns shadow --out "$out/a" ||
    fail "shadow column: $(cat "$out/a/table.md" 2>/dev/null)"
cat "$out/a/table.md"
expect_eq "shadow cells" "$(jq -s '[.[] | select(.outcome == "SUCCESS")] | length' "$out/a/cells.jsonl")" 4
FAULT_KINDS=crash,kill ./tests/campaign/run-campaign --build "$BUILD" --quick --rows mp3 --columns none \
    --out "$out/b" >/dev/null
o=$(jq -r .outcome "$out/b/cells.jsonl")
[ "$o" = MALFUNCTION ] || [ "$o" = CRASH ] || fail "mp3 with no recovery: $o, want MALFUNCTION or CRASH"
log "mp3 with no recovery: $o: $(jq -r .reason "$out/b/cells.jsonl")"
exit 0
