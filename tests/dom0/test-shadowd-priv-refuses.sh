#!/usr/bin/env bash
# shadowd-priv, the part that holds the domain drivers, refuses what a
# compromised shadowd could send it: privpoke (tests/dom0/privpoke.c) starts
# it on a socketpair with this test's config and sends malformed messages
# (short, long, unknown types, strings without their NUL, domids 0 and out of
# range, fields a type does not use) and well-formed requests outside the
# config (find or create a domain it does not name, drv under another name,
# destroy / pause / crash a guest, another driver kind). Each is answered
# with an error, logged, and does nothing: the guest still runs, no domain
# was created. A find and an info of drv, an info of the guest and a pause
# of drv are allowed.
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
start_sim
sd_conf
sd_domain drv
drv=$(new_dom drv)
guest=$(new_dom guest)
before=$("$XENSIM" list | wc -l)
out=$("$TPROG/dom0/privpoke" "$BUILD/bin/shadowd-priv" "$SD_CONF" "$drv" "$guest" 2>"$TEST_TMP/priv.log")
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "privpoke: $(echo "$out" | grep FAIL) $(cat "$TEST_TMP/priv.log")"

# Refused, with a log line each: 28 malformed (7 of them looks, 2 settles), 13 outside
# the config or past what its driver does (3 of them settles, 1 an unpause).
expect_eq "malformed requests logged" \
    "$(grep -c 'shadowd-priv\[.*\]: refused a malformed request' "$TEST_TMP/priv.log")" 28
expect_eq "requests outside the config logged" \
    "$(grep -cE 'shadowd-priv\[.*\]: refused (find|create|destroy|pause|unpause|crash|settle) request' "$TEST_TMP/priv.log")" 13
grep -q "refused destroy request: domain $guest ('guest') is not one of the xensim domains of $SD_CONF" \
    "$TEST_TMP/priv.log" || fail "no reason for the refused destroy: $(cat "$TEST_TMP/priv.log")"
grep -q "41 requests refused in this run" "$TEST_TMP/priv.log" || fail "refusals not counted"

# And did nothing: the guest runs, nothing was created; drv was paused and
# unpaused (allowed).
expect_eq "guest" "$("$XENSIM" info "$guest" | sed -n 's/^state=//p')" running
expect_eq "drv" "$("$XENSIM" info "$drv" | sed -n 's/^state=//p')" running
expect_eq "domains" "$("$XENSIM" list | wc -l)" "$before"
exit 0
