#!/usr/bin/env bash
# Bad input on the wire gets xenstored's behaviour and leaves the store
# intact: a header over XENSTORE_PAYLOAD_MAX drops the connection; missing
# NULs, extra strings, invalid paths (characters, "//", trailing "/", over
# 3072 bytes) are EINVAL; unknown types ENOSYS; unknown transaction ids
# ENOENT; replies echo req_id and tx_id; the initial watch event follows the
# OK; pipelined requests are all answered in order; DIRECTORY over 4096 bytes
# is E2BIG and DIRECTORY_PART pages it; a guest's privileged requests EACCES.
source "$(dirname "$0")/xs-functions.sh"
start_sim
for c in oversize nonul badpath unknown-type txid echo pipeline dirpart reset; do
    timeout 60 "$XRAW" $c || fail "case $c"
done
g=$(new_dom g)
as_dom $g timeout 60 "$XRAW" guest-priv || fail "case guest-priv"
# The daemon survived all of it and the store is whole.
expect_out "store afterwards" "$(lines kept '' 'tool local raw vm libxl')" -- \
    xc "read /raw/oversize" "read /tool" "ls /"
exit 0
