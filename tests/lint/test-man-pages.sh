#!/usr/bin/env bash
# The man pages (man/): each renders with no groff warning (warnings are
# errors), its .TH names the file, and it has NAME, SYNOPSIS, DESCRIPTION and
# SEE ALSO; every program the packages put in /usr/sbin (debian/*.install)
# has its page; and every long option a program's --help prints (from
# $BUILD/bin; a program not built is skipped) appears in its page, as every
# parameter the nbdkit plugin's --help lists appears in the plugin's.
source "$(dirname "$0")/../functions.sh"
requires groff
cd "$TOP"
pages=(man/*.[0-9])
[ -f "${pages[0]}" ] || fail "no man pages in man/"

# The page as text, unwrapped (a long line, no hyphenation), no bold or underline.
render() { groff -man -Tutf8 -P-cbou -rLL=250n -rHY=0 "$1" 2>/dev/null; }

# ---- each page renders cleanly and names itself ----
for p in "${pages[@]}"; do
    base=${p##*/}
    # -ww: every warning; both the default device and the terminal's (80 columns,
    # as man(1) and lintian render it, where a line that cannot be adjusted warns).
    for dev in "" "-Tutf8 -rLL=78n"; do
        # shellcheck disable=SC2086
        out=$(groff -man -ww -z $dev "$p" 2>&1) || fail "$p: groff failed: $out"
        [ -z "$out" ] || fail "$p: groff warnings (${dev:-ps}): $out"
    done
    if command -v man >/dev/null; then
        out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$p" 2>&1 >/dev/null)
        [ -z "$out" ] || fail "$p: man --warnings: $out"
    fi
    th=$(sed -n 's/^\.TH \([^ ]*\) \([^ ]*\) .*/\1.\2/p' "$p" | head -n1 | sed 's/\\-/-/g' | tr 'A-Z' 'a-z')
    expect_eq "$p: .TH name and section" "$th" "$base"
    text=$(render "$p")
    for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
        grep -qx "$s" <<<"$text" || fail "$p: no $s section"
    done
done
log "${#pages[@]} pages render with no warning"

# has_opt PAGE OPT: OPT appears in the rendered PAGE as a word of its own
# (a KEY= parameter: followed by anything).
has_opt() {
    local end='([^A-Za-z0-9-]|$)'
    [[ $2 == *= ]] && end=
    render "$1" | grep -qE -- "(^|[^A-Za-z0-9-])$2$end"
}
# all_in_page PAGE WHO WORDS: every option or KEY= of WORDS (what WHO lists) is in PAGE.
all_in_page() {
    local w
    for w in $3; do
        has_opt "$1" "$w" || fail "$1: $2 lists $w, the page does not have it"
    done
}

# ---- every packaged program has a page, with every option of its --help ----
progs=$(sed -n 's|^usr/sbin/||p' debian/*.install | sort -u)
[ -n "$progs" ] || fail "no usr/sbin programs in debian/*.install"
checked=0
for prog in $progs; do
    page=man/$prog.8
    [ -f "$page" ] || fail "$prog: no man page $page"
    bin=$BUILD/bin/$prog
    if [ ! -x "$bin" ]; then
        log "$prog: not built in $BUILD, options not checked"
        continue
    fi
    help=$("$bin" --help 2>&1) || fail "$prog --help failed: $help"
    opts=$(grep -oE -- '--[a-z0-9][a-z0-9-]*' <<<"$help" | sort -u)
    all_in_page "$page" "$prog --help" "$opts"
    log "$prog: $(wc -w <<<"$opts") long options of --help in $page"
    checked=$((checked + 1))
done

# ---- the nbdkit plugin: every parameter of its --help ----
plugin=$BUILD/lib/nbdkit-understudy-blk-plugin.so
page=man/nbdkit-understudy-blk-plugin.1
[ -f "$page" ] || fail "no man page $page for the nbdkit plugin"
if command -v nbdkit >/dev/null && [ -f "$plugin" ]; then
    pre=()
    if ldd "$plugin" | grep -c libasan >/dev/null; then # not -q: ldd's SIGPIPE
        pre=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
            "ASAN_OPTIONS=detect_leaks=0")
    fi
    help=$("${pre[@]}" nbdkit "$plugin" --help 2>&1) || fail "nbdkit $plugin --help failed: $help"
    keys=$(sed -n '/^plugin: understudy-blk/,$p' <<<"$help" | grep -oE '^[a-z][a-z0-9-]*=' | sort -u)
    [ -n "$keys" ] || fail "no parameters in nbdkit $plugin --help: $help"
    all_in_page "$page" "the plugin's --help" "$keys"
    log "nbdkit plugin: $(wc -w <<<"$keys") parameters of --help in $page"
    checked=$((checked + 1))
else
    log "nbdkit or $plugin missing: the plugin's parameters not checked"
fi
[ "$checked" -gt 0 ] || skip "no program built in $BUILD to check the pages against"
exit 0
