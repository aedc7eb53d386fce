#!/usr/bin/env bash
# A hostile client of the hypervisor socket (malformed framing, wrong sizes
# and counts, FIFOs and pipes passed as pages, requests for another domain's
# grant, floods of unread replies, more handles than a domain may hold: 1024)
# gets errors or a dropped connection; the
# daemon never crashes, blocks or keeps the fds, the other domain's page is
# untouched, and well-behaved clients are still served.
source "$(dirname "$0")/hyp-functions.sh"
start_sim
doms=()
for n in 1 2 3; do
    d=$(new_dom "d$n") || fail "create domain d$n"
    doms+=("$d")
done
"$TPROG/xensim/hyp-hostile" "${doms[@]}" || fail "hostile client check failed"
exit 0
