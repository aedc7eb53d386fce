#!/usr/bin/env bash
# A driver domain that crashes is detected as such (its shutdown reason) and
# restarted by shadowd as a new domain, once. The failed domain was destroyed
# before the rewire, so the rewire says every earlier backend is fenced
# (FE/shadow/fenced = the new generation).
source "$(dirname "$0")/../functions.sh"
source "$(dirname "$0")/dom0-functions.sh"
requires jq xenstore-read
sd_one_device_setup
sd_crash_and_recover
sd_log_has "recovery [0-9]+: detect: domain $D1 shut down \(reason crash\)" || fail "detect reason"
expect_eq "restarts" "$(sd_q drv .restarts)" 1
expect_eq "FE/shadow/fenced" "$(fe_key "$G" 51712 shadow/fenced)" "$(fe_key "$G" 51712 shadow/generation)"
exit 0
