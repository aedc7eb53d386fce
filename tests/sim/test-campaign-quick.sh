#!/usr/bin/env bash
# The application table's quick run (tests/campaign): every row built (the
# four sound rows, the disk encoder, compiler and database, the network transfer,
# session and analyzer) in the shadow column, two faults each, must all be SUCCESS; the
# mp3 row with faults that take the domain down must not be, with no
# recovery (the judge sees the audio that never came back) nor with restart
# only (the frontend's restart-only mode gives the new backend no stream:
# mpg123's audio goes nowhere).
source "$(dirname "$0")/../functions.sh"
requires jq
out=$TEST_TMP/campaign
./tests/campaign/run-campaign --build "$BUILD" --quick --columns shadow \
    --rows mp3,recorder,speech,clips,encoder,compiler,database,transfer,session,analyzer --out "$out/a" ||
    fail "shadow column: $(cat "$out/a/table.md" 2>/dev/null)"
cat "$out/a/table.md"
expect_eq "shadow cells" "$(jq -s '[.[] | select(.outcome == "SUCCESS")] | length' "$out/a/cells.jsonl")" 10
FAULT_KINDS=crash,kill ./tests/campaign/run-campaign --build "$BUILD" --quick --rows mp3 --columns none,restart \
    --out "$out/b" >/dev/null
for col in none restart; do
    o=$(jq -r --arg c $col 'select(.column == $c) | .outcome' "$out/b/cells.jsonl")
    [ "$o" = MALFUNCTION ] || [ "$o" = CRASH ] || fail "mp3 in the $col column: $o, want MALFUNCTION or CRASH"
    log "mp3 in the $col column: $o: $(jq -r --arg c $col 'select(.column == $c) | .reason' "$out/b/cells.jsonl")"
done
exit 0
