#!/usr/bin/env bash
# Every C file in the repository is formatted with the project's .clang-format.
source "$(dirname "$0")/../functions.sh"
requires clang-format git
cd "$TOP"
bad=()
while IFS= read -r f; do
    [ -f "$f" ] || continue
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files -co --exclude-standard '*.c' '*.h')
[ ${#bad[@]} -eq 0 ] || fail "not clang-formatted (run make format): ${bad[*]}"
exit 0
